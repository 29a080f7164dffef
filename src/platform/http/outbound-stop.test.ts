import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginProcessStop } from '../../shared/shutdown.js';
import { createOutboundHttp } from './outbound.js';

describe('outbound HTTP on a process stop', () => {
  let receiver: http.Server;
  let url: string;
  beforeAll(async () => {
    // A receiver that reads the request and never answers.
    receiver = http.createServer(() => undefined);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('aborts an attempt in flight at once when the process begins to stop, naming the stop', async () => {
    const outbound = createOutboundHttp({ timeoutMs: 300_000, allowPrivate: true });
    const attempt = outbound.post(url, { 'content-type': 'application/json' }, '{}');
    await new Promise((r) => setTimeout(r, 100)); // the request is on the wire
    beginProcessStop();
    const result = await attempt; // without the abort this would wait for the 300 s deadline
    expect(result).toMatchObject({ ok: false, kind: 'network', message: expect.stringMatching(/stopping/) });
    await outbound.close();
  });
});
