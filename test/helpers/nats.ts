import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const BINARY = '/usr/sbin/nats-server';

/** A stored message of a stream, as the tests read it back. */
export interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string | null;
  body: Record<string, unknown>;
}

/**
 * A NATS server with JetStream for one test file: a private `nats-server` on a random port with a
 * store directory of its own when the binary is installed (so it can be killed and restarted), else
 * the machine's NATS at 127.0.0.1:4222 (then `restart` is refused).
 */
export class NatsProcess {
  private child: ChildProcess | null = null;
  private readonly storeDir: string | null;

  private constructor(readonly port: number, private readonly privateServer: boolean) {
    this.storeDir = privateServer ? mkdtempSync(path.join(tmpdir(), 'basegate-nats-')) : null;
  }

  static async start(): Promise<NatsProcess> {
    if (!existsSync(BINARY)) return new NatsProcess(4222, false);
    const server = new NatsProcess(await freePort(), true);
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** (Re)start on the same port and store; resolves once it accepts connections. */
  async start(): Promise<void> {
    if (!this.privateServer) throw new Error(`${BINARY} is not installed: cannot start a private NATS server`);
    const child = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir!], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.removeListener('exit', reap));
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`nats-server did not start: ${output}`)), 15_000);
      const seen = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited: ${output}`));
      });
    });
  }

  /** Kill it hard (SIGKILL) and wait until it is gone; the store directory stays for a restart. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    if (this.storeDir) rmSync(this.storeDir, { recursive: true, force: true });
  }
}

/** A stream and subject prefix no other test uses. */
export function uniqueStream(): { stream: string; prefix: string } {
  const tag = randomBytes(4).toString('hex');
  return { stream: `T_${tag}`, prefix: `bgtest_${tag}` };
}

/** Every message of `stream`, in stream order (empty when the stream does not exist). */
export async function streamMessages(url: string, stream: string): Promise<StoredMessage[]> {
  const nc = await connect({ servers: url, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    let last: number;
    try {
      last = (await jsm.streams.info(stream)).state.last_seq;
    } catch {
      return [];
    }
    const messages: StoredMessage[] = [];
    for (let seq = 1; seq <= last; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m) continue;
      messages.push({ seq, subject: m.subject, msgId: m.header?.get('Nats-Msg-Id') ?? null, body: m.json<Record<string, unknown>>() });
    }
    return messages;
  } finally {
    await nc.close();
  }
}

export async function deleteStream(url: string, stream: string): Promise<void> {
  const nc = await connect({ servers: url, timeout: 5000 }).catch(() => null);
  if (!nc) return;
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
