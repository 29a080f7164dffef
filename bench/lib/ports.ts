import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (for a server process a bench starts). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
