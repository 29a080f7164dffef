import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/index.js';

interface RawExchange {
  /** Everything the server sent until it closed the connection. */
  response: Promise<string>;
  socket: net.Socket;
}

/** Send `head` (and `body`) on a raw connection; the promise resolves when the server closes it. */
function raw(port: number, head: string, body = ''): RawExchange {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.write(head + body));
  return { socket, response: new Promise((resolve) => socket.on('close', () => resolve(received))) };
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as net.AddressInfo).port;
}

describe('connection limits', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('cuts off a request whose body never finishes after REQUEST_TIMEOUT_MS, while others are served', async () => {
    t = await createTestApp('sqlite', { REQUEST_TIMEOUT_MS: '1000' });
    const port = await listen(t);
    const slow = raw(port, 'POST /api2/auth-token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n', '{"user');
    const ping = await fetch(`http://127.0.0.1:${port}/ping/`);
    expect(ping.status).toBe(200);
    const response = await slow.response; // resolves only once the server closes the connection
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes the connection after answering a request whose oversized body it did not read', async () => {
    // A long request timeout: only the fix, not the timeout, can close these connections in time.
    t = await createTestApp('sqlite', { REQUEST_TIMEOUT_MS: '600000', BODY_LIMIT_BYTES: '1024' });
    const port = await listen(t);
    const head = (method: string, url: string) =>
      `${method} ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n`;
    const exchanges = [
      raw(port, head('GET', '/api2/auth-token/'), '{"username":'),
      raw(port, head('POST', '/api2/auth-token/'), '{"username":'),
      raw(port, head('GET', '/ping/'), 'x'.repeat(10_000)),
    ];
    const responses = await Promise.all(exchanges.map((e) => e.response));
    const [getOversized, postOversized, pingWithBody] = responses;
    for (const response of responses) expect(response).toMatch(/\r\nconnection: close\r\n/i);
    expect(postOversized).toMatch(/^HTTP\/1\.1 413 /);
    expect(postOversized).toContain('{"error_msg":"Request body is too large."}');
    expect(getOversized).toMatch(/^HTTP\/1\.1 (405|404|413) /);
    expect(pingWithBody).toMatch(/^HTTP\/1\.1 200 /);
  }, 20_000);
});
