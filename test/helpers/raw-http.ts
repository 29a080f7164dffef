import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app.js';

export interface RawResponse {
  status: number;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

/** Listens on a free loopback port and returns the base URL. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/**
 * One HTTP request with exactly the given headers (node adds only Host and Connection), the way an
 * official client sends it; `body` is written as is. Times out after 10 s. A Server-Sent Events answer
 * never ends by design: it resolves on its head with an empty body and the connection is closed.
 */
export function rawRequest(server: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  const url = new URL(path, server);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, timeout: 10_000 },
      (res) => {
        if (/^text\/event-stream/.test(res.headers['content-type'] ?? '')) {
          resolve({ status: res.statusCode ?? 0, body: '', json: () => { throw new Error(`${method} ${path} is an event stream`); } });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text, json: <T>() => JSON.parse(text) as T });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
