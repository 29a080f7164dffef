import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { adminQuery } from '../helpers/db.js';
import { ROOT, cliCommand } from '../helpers/cli-process.js';

/** A real server process (`basegate serve`) started from the bundle built from the sources, as an operator runs it. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

export function startServerProcess(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServerProcess> {
  // One process, so SIGKILL reaches the server itself.
  const [command, argv] = cliCommand('serve', ...args);
  const child = spawn(command, argv, { cwd: ROOT, env });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`server did not start:\n${output}`));
    }, 90_000);
    const poll = setInterval(() => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      clearInterval(poll);
      resolve({ url: match[1]!, child, output: () => output, exited });
    }, 20);
    exited.then(() => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`server exited at start:\n${output}`));
    });
  });
}

export const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };

/**
 * The environment of a server process on a fresh database of `dialect` (a data directory of its own;
 * on PostgreSQL a schema of its own, dropped by `drop`), with the admin above; `extra` on top.
 */
export async function serverEnv(dialect: 'sqlite' | 'postgres', extra: NodeJS.ProcessEnv = {}) {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = process.env;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'basegate-proc-'));
  const env: NodeJS.ProcessEnv = {
    ...rest,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    SECRET_KEY: 'process-test-secret-key-0123456789abcdef0123456789',
    ...extra,
  };
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let drop = async () => undefined as unknown;
  if (dialect === 'postgres') {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    drop = () => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  return { env, dataDir, schema, drop };
}

/** A local TCP port nothing listens on (at the moment of asking). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Kill with SIGKILL (no stop handler runs) and wait until the process is gone. */
export async function killHard(server: ServerProcess): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

/** Poll `check` every 20 ms until it is true; fails after `timeoutMs` naming `what`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Delivery {
  webhookId: string;
  rowName: string;
  at: number;
}

/**
 * A webhook receiver that holds the first request open without ever answering (the attempt stays in
 * flight until its sender dies) and answers every later one with 200 at once.
 */
export class HoldingReceiver {
  readonly received: Delivery[] = [];
  private readonly server: Server;
  private readonly held: ServerResponse[] = [];

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { row_name?: string; row?: { Name?: string } } };
        this.received.push({ webhookId: String(req.headers['webhook-id']), rowName: body.data.row_name ?? body.data.row?.Name ?? '', at: Date.now() });
        if (this.received.length === 1) this.held.push(res);
        else res.writeHead(200).end('ok');
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** The admin's base with one webhook to `hookUrl`, used through the HTTP API of a running server. */
export async function baseWithWebhook(server: ServerProcess, admin: { email: string; password: string }, hookUrl: string | null) {
  const { token } = await json<{ token: string }>(
    await fetch(`${server.url}/api2/auth-token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: admin.email, password: admin.password }),
    }),
  );
  const auth = { authorization: `Token ${token}`, 'content-type': 'application/json' };
  const { table } = await json<{ table: { workspace_id: number; uuid: string } }>(
    await fetch(`${server.url}/api/v2.1/dtables/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'kill-base' }) }),
  );
  const basePath = `${server.url}/api/v2.1/workspace/${table.workspace_id}/dtable/kill-base`;
  if (hookUrl !== null) {
    await json(await fetch(`${basePath}/webhooks/`, { method: 'POST', headers: auth, body: JSON.stringify({ url: hookUrl, secret: 'kill-test-secret' }) }));
  }
  const { access_token } = await json<{ access_token: string }>(await fetch(`${basePath}/access-token/`, { headers: auth }));
  return { uuid: table.uuid, baseToken: access_token };
}

/** Append one row (its Name is `name`) through the given server. */
export async function appendRow(server: ServerProcess, base: { uuid: string; baseToken: string }, name: string): Promise<void> {
  await json(
    await fetch(`${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/`, {
      method: 'POST',
      headers: { authorization: `Token ${base.baseToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ table_name: 'Table1', rows: [{ Name: name }] }),
    }),
  );
}
