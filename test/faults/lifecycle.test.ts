import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { adminQuery } from '../helpers/db.js';
import { freePort } from './processes.js';
import { ROOT, cliCommand } from '../helpers/cli-process.js';
import { StallingProxy } from './support.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };

interface Server {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function start(env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(...cliCommand('serve'), { cwd: ROOT, env });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    const poll = setInterval(() => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:(\d+))/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      clearInterval(poll);
      resolve({ url: match[1]!, port: Number(match[2]), child, output: () => output, exited });
    }, 20);
  });
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A login whose body is sent in two parts: the server has the request, but not all of it, until `finish()`. */
function slowLogin(port: number): { received: Promise<void>; finish(): void; answer: Promise<string> } {
  const body = JSON.stringify({ username: ADMIN.email, password: ADMIN.password });
  const socket = net.connect(port, '127.0.0.1');
  let response = '';
  socket.on('data', (d) => (response += d));
  const answer = new Promise<string>((resolve) => {
    socket.on('close', () => resolve(response));
    socket.on('error', () => undefined);
  });
  const received = new Promise<void>((resolve) =>
    socket.on('connect', () => {
      socket.write(
        `POST /api2/auth-token/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
        () => resolve(),
      );
    }),
  );
  return { received, finish: () => socket.write(body.slice(10)), answer };
}

async function until(check: () => boolean, what: string, output: () => string): Promise<void> {
  for (let i = 0; i < 3000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}:\n${output()}`);
}

describe.each(DIALECTS)('stop on SIGTERM under load (%s)', (dialect) => {
  it('answers all 50 requests in flight, flushes last_access, and exits 0', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'basegate-stop-'));
    const { DATABASE_URL: _d, REDIS_URL: _r, SECRET_KEY: _s, ...rest } = process.env;
    const env: NodeJS.ProcessEnv = { ...rest, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const adminClient = async <T>(work: (c: pg.Client) => Promise<T>) => {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      try {
        return await work(c);
      } finally {
        await c.end();
      }
    };
    if (dialect === 'postgres') {
      await adminClient((c) => c.query(`CREATE SCHEMA ${schema}`));
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      env.DATABASE_URL = url.toString();
    }
    const readLastAccess = async (): Promise<number | null> => {
      if (dialect === 'sqlite') {
        const db = new SQLite(path.join(dataDir, 'basegate.sqlite3'), { readonly: true });
        try {
          return (db.prepare('select last_access from api_tokens').get() as { last_access: number | null }).last_access;
        } finally {
          db.close();
        }
      }
      return adminClient(async (c) => Number((await c.query(`select last_access from ${schema}.api_tokens`)).rows[0].last_access));
    };

    try {
      const server = await start(env);
      const { token } = await json<{ token: string }>(
        await fetch(`${server.url}/api2/auth-token/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }),
        }),
      );
      const auth = { authorization: `Token ${token}`, 'content-type': 'application/json' };
      const { table } = await json<{ table: { name: string; workspace_id: number } }>(
        await fetch(`${server.url}/api/v2.1/dtables/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'stop-base' }) }),
      );
      const { api_token } = await json<{ api_token: string }>(
        await fetch(`${server.url}/api/v2.1/workspace/${table.workspace_id}/dtable/stop-base/api-tokens/`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ app_name: 'stopper', permission: 'rw' }),
        }),
      );
      const useApiToken = () => fetch(`${server.url}/api/v2.1/dtable/app-access-token/`, { headers: { authorization: `Token ${api_token}` } });
      expect((await useApiToken()).status).toBe(200); // the first use in a minute is written at once
      const written = await readLastAccess();
      expect(written).not.toBeNull();
      await new Promise((r) => setTimeout(r, 20));
      expect((await useApiToken()).status).toBe(200); // later uses wait in memory for the flush
      expect(await readLastAccess()).toBe(written);

      const incoming = () => (server.output().match(/"url":"\/api2\/auth-token\/"/g) ?? []).length;
      const before = incoming();
      const logins = Array.from({ length: 50 }, () => slowLogin(server.port));
      await Promise.all(logins.map((l) => l.received));
      await until(() => incoming() >= before + 50, 'the 50 requests to arrive', server.output);
      server.child.kill('SIGTERM');
      await until(() => /shutting down/.test(server.output()), 'the stop to begin', server.output);
      for (const login of logins) login.finish();
      const answers = await Promise.all(logins.map((l) => l.answer));

      expect(await server.exited).toBe(0);
      // Every request got its real answer (none reset), and its connection was closed after it.
      expect(answers.map((a) => a.split('\r\n')[0])).toEqual(Array(50).fill('HTTP/1.1 200 OK'));
      expect(answers.every((a) => /\r\nconnection: close\r\n/i.test(a))).toBe(true);
      expect(server.output()).not.toMatch(/shutdown forced|error during shutdown/);
      expect(await readLastAccess()).toBeGreaterThan(written!);
    } finally {
      if (dialect === 'postgres') await adminClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    }
  }, 120_000);
});

describe('a stop that outlasts SHUTDOWN_TIMEOUT_MS', () => {
  it('is forced with exit code 1 and logs what it was waiting for', async () => {
    const { DATABASE_URL: _d, REDIS_URL: _r, SECRET_KEY: _s, ...rest } = process.env;
    const server = await start({
      ...rest,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-stop-')),
      PORT: '0',
      LOG_LEVEL: 'info',
      ADMIN_PASSWORD: ADMIN.password,
      DATABASE_CONNECT_TIMEOUT_MS: '200',
      DATABASE_STATEMENT_TIMEOUT_MS: '200',
      SHUTDOWN_TIMEOUT_MS: '1500',
      REQUEST_TIMEOUT_MS: '600000',
    });
    // A request whose body never completes keeps the stop waiting past its deadline.
    const stuck = slowLogin(server.port);
    await stuck.received;
    await until(() => /"url":"\/api2\/auth-token\/"/.test(server.output()), 'the request to arrive', server.output);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/"waitingFor":"in-flight HTTP requests"[^\n]*"openConnections":1[^\n]*shutdown forced/);
  }, 60_000);
});



describe.each(['postgres' as const].filter(() => !!process.env.TEST_DATABASE_URL))('start while the database is down (%s)', () => {
  it('retries with backoff, says so in the log, and serves once the database is reachable', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE SCHEMA ${schema}`);
    const target = new URL(process.env.TEST_DATABASE_URL!);
    const port = await freePort(); // nothing listens here yet: connections are refused
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.host = `127.0.0.1:${port}`;
    url.searchParams.set('options', `-c search_path=${schema}`);
    const { REDIS_URL: _r, SECRET_KEY: _s, ...rest } = process.env;
    const child = spawn(...cliCommand('serve'), {
      cwd: ROOT,
      env: { ...rest, DATABASE_URL: url.toString(), DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-start-')), PORT: '0', LOG_LEVEL: 'info', ADMIN_PASSWORD: 'admin-password-1' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const until = async (pattern: RegExp, what: string) => {
      for (let i = 0; i < 6000 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 10));
      if (!pattern.test(output)) throw new Error(`no ${what}:\n${output}`);
    };
    const proxy = new StallingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      await until(/database unreachable at start; retrying[^\n]*"attempt":2|"attempt":2[^\n]*database unreachable at start/, 'second retry');
      expect(output).toMatch(/ECONNREFUSED/);
      expect(output).not.toMatch(/Server listening/);
      await proxy.listen(port); // the database comes up
      await until(/Server listening at http:\/\/127\.0\.0\.1:\d+/, 'listening line');
      expect(output).toMatch(/database is reachable/);
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
      expect((await fetch(`${listening}/health/ready/`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await proxy.close();
      await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  }, 120_000);
});
