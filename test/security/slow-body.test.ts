import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';

/*
 * A body trickled in a byte at a time (each byte well within any idle timeout) is still cut off at
 * REQUEST_TIMEOUT_MS with 408 and a closed connection, on a real socket, while others are served.
 */

describe.each(DIALECTS)('a slow body is cut off (%s)', (dialect) => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp(dialect, { REQUEST_TIMEOUT_MS: '1000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t.close());

  it('answers 408 and closes the connection of a client trickling its body, and /ping/ answers meanwhile', async () => {
    const declared = 10_000;
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let sent = 0;
    socket.on('data', (d) => (received += d));
    socket.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('connect', () => {
      socket.write(`POST /api2/auth-token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{`);
      // One byte every 100 ms: the whole body would take 1,000 s.
      timer = setInterval(() => {
        if (!socket.destroyed && socket.writable) {
          socket.write('x');
          sent++;
        }
      }, 100);
    });
    try {
      const ping = await fetch(`http://127.0.0.1:${port}/ping/`);
      expect(ping.status).toBe(200);
      await closed; // bounded by the server: only its timeout closes this connection
    } finally {
      clearInterval(timer);
    }
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(declared);
  }, 20_000);
});
