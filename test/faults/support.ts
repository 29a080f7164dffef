import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/**
 * A TCP proxy in front of PostgreSQL that a test can stall: while stalled it accepts connections
 * and keeps every socket open but forwards nothing, as a hung database server or a black-holed
 * network does.
 */
export class StallingProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    // Data that arrives while stalled is dropped: the peer waits for an answer that never comes.
    client.on('data', (chunk) => {
      if (!this.stalled) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!this.stalled) client.write(chunk);
    });
  }
}

/**
 * Another process holding SQLite's write lock on `file` (BEGIN IMMEDIATE) for `holdMs`. Resolves
 * once the lock is held; `done` resolves when the holder committed and exited.
 */
export function holdSqliteWriteLock(file: string, holdMs: number): Promise<{ done: Promise<void> }> {
  const root = path.resolve(import.meta.dirname, '../..');
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('begin immediate');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('commit'); db.close(); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ['-e', script, file, String(holdMs)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const done = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stdout.on('data', (d: Buffer) => {
      if (String(d).includes('locked')) resolve({ done });
    });
  });
}
