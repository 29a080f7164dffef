import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from './redis.js';

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const clients: Redis[] = [];
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
  process.off('unhandledRejection', onRejection);
  rejections.length = 0;
});

describe('createRedis', () => {
  it('a command nobody awaits does not become an unhandled rejection when the connection closes', async () => {
    process.on('unhandledRejection', onRejection);
    const client = createRedis(`redis://127.0.0.1:${await closedPort()}`, { name: 'test', waitWhileAway: true });
    clients.push(client);
    // Queued while Redis is away, as ioredis's own re-subscribe and the socket.io adapter's SUBSCRIBE are.
    void client.subscribe('basegate:test');
    void client.get('key');
    client.disconnect(); // flushes the queue: "Connection is closed."
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(rejections).toEqual([]);
  });

  it('a caller that awaits a command still gets its error', async () => {
    const client = createRedis(`redis://127.0.0.1:${await closedPort()}`, { name: 'test' });
    clients.push(client);
    await expect(client.get('key')).rejects.toThrow();
  });
});
