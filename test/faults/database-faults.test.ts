import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { connect, migrateToLatest, type DbHandle } from '../../src/db/index.js';
import { createTestApp, type TestApp } from '../helpers/index.js';
import { holdSqliteWriteLock, StallingProxy } from './support.js';

const url = () => process.env.TEST_DATABASE_URL!;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database handle on a schema of its own, through `databaseUrl`, with short bounded waits. */
async function schemaHandle(schema: string, databaseUrl: string, waits: { connectTimeoutMs: number; statementTimeoutMs: number }): Promise<DbHandle> {
  const handle = connect({ databaseUrl, dataDir: '/nonexistent', pgSchema: schema, poolSize: 5, ...waits });
  return {
    ...handle,
    async close() {
      await handle.close();
      await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

function login(t: TestApp, email: string) {
  return t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: email, password: 'password-123' } });
}

describe.each(['postgres' as const].filter(() => !!process.env.TEST_DATABASE_URL))('database faults on PostgreSQL (%s)', (dialect) => {
  describe('backends terminated under load', () => {
    let t: TestApp;
    const email = 'load@example.com';
    beforeAll(async () => {
      t = await createTestApp(dialect);
      await t.container.accounts.createUser({ email, password: 'password-123' });
    });
    afterAll(() => t.close());

    it('answers 503 with Retry-After while its connections are killed, lives on, and answers 200 afterwards', async () => {
      const { users } = await admin(async (c) => {
        // Hold a lock the login's user lookup waits for, so the app's connections are busy when killed.
        await c.query('BEGIN');
        const schema = (await t.container.db.selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s')).executeTakeFirstOrThrow()).s;
        await c.query(`LOCK TABLE ${schema}.users IN ACCESS EXCLUSIVE MODE`);
        const inFlight = Array.from({ length: 50 }, () => login(t, email));
        const holder = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
        let blocked: number[] = [];
        for (let i = 0; i < 200 && blocked.length === 0; i++) {
          await new Promise((r) => setTimeout(r, 20));
          blocked = (await c.query<{ pid: number }>('select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holder])).rows.map((r) => r.pid);
        }
        expect(blocked.length).toBeGreaterThan(0);
        await c.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [blocked]);
        await c.query('ROLLBACK');
        return { users: await Promise.all(inFlight) };
      });
      const statuses = users.map((r) => r.statusCode);
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
      const refused = users.filter((r) => r.statusCode === 503);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]!.json()).toEqual({ error_msg: expect.stringMatching(/database/i) });
      expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);
      expect((await login(t, email)).statusCode).toBe(200);
    });

    it('survives an idle pooled connection being terminated (no unhandled error event) and reconnects', async () => {
      const pids = await Promise.all(
        Array.from({ length: 3 }, () => t.container.db.connection().execute(async (c) => {
          const row = await c.selectNoFrom((eb) => eb.fn<number>('pg_backend_pid', []).as('pid')).executeTakeFirstOrThrow();
          return row.pid;
        })),
      );
      await admin((c) => c.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]));
      await new Promise((r) => setTimeout(r, 300)); // the idle clients see their sockets close
      const again = await Promise.all(Array.from({ length: 5 }, () => login(t, email)));
      expect(again.map((r) => r.statusCode).filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect((await login(t, email)).statusCode).toBe(200);
      const ready = await t.request({ method: 'GET', url: '/health/ready/' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ok', database: 'ok' });
    });
  });

  describe('a stalled database behind a TCP proxy', () => {
    let t: TestApp;
    let proxy: StallingProxy;
    const email = 'stall@example.com';
    beforeAll(async () => {
      const target = new URL(url());
      proxy = new StallingProxy({ host: target.hostname, port: Number(target.port || 5432) });
      await proxy.listen();
      const viaProxy = new URL(url());
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const schema = `t_${randomBytes(6).toString('hex')}`;
      await admin((c) => c.query(`CREATE SCHEMA ${schema}`));
      // Migrate straight to the database with the usual waits: the migrator's advisory lock is one for the
      // whole database, and other test files migrating their schemas may hold it past the 1-s limit below.
      const direct = connect({ databaseUrl: url(), dataDir: '/nonexistent', pgSchema: schema, poolSize: 1 });
      try {
        await migrateToLatest(direct.db);
      } finally {
        await direct.close();
      }
      const database = await schemaHandle(schema, viaProxy.toString(), { connectTimeoutMs: 500, statementTimeoutMs: 1000 });
      t = await createTestApp(dialect, { DATABASE_CONNECT_TIMEOUT_MS: '500', DATABASE_STATEMENT_TIMEOUT_MS: '1000' }, { database });
      await t.container.accounts.createUser({ email, password: 'password-123' });
    });
    afterAll(async () => {
      proxy?.resume();
      await t?.close();
      await proxy?.close();
    });

    it('bounds the wait on pooled and new connections with a 503, readiness fails, and service resumes after the stall', async () => {
      expect((await login(t, email)).statusCode).toBe(200);
      proxy.stall();
      // Pooled connections (the query never gets an answer) and new ones (the handshake never completes).
      const stalled = await Promise.all(Array.from({ length: 8 }, () => login(t, email)));
      expect(stalled.map((r) => r.statusCode)).toEqual(Array(8).fill(503));
      expect(stalled[0]!.json().error_msg).toMatch(/database/i);
      expect(stalled[0]!.headers['retry-after']).toBeDefined();
      const ready = await t.request({ method: 'GET', url: '/health/ready/' });
      expect(ready.statusCode).toBe(503);
      expect((await t.request({ method: 'GET', url: '/health/live/' })).statusCode).toBe(200);
      proxy.resume();
      expect((await login(t, email)).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: '/health/ready/' })).statusCode).toBe(200);
    }, 30_000);
  });
});

/** An app on a SQLite file (so another process can lock it) whose log lines are kept. */
async function fileApp(dir: string, connectTimeoutMs: number) {
  const config = loadConfig(
    { SECRET_KEY: 'test-secret-key-test-secret-key-0123456789', DATA_DIR: dir, LOG_LEVEL: 'error', DATABASE_CONNECT_TIMEOUT_MS: String(connectTimeoutMs) },
    { persistSecret: false },
  );
  const file = path.join(dir, 'faults.sqlite3');
  const database = connect({ databaseUrl: `sqlite:${file}`, dataDir: dir, connectTimeoutMs });
  const container = createContainer(config, { database });
  await migrateToLatest(container.db);
  const lines: string[] = [];
  const app = await buildApp(container, { logStream: { write: (line) => void lines.push(line) } });
  await app.ready();
  await container.accounts.createUser({ email: 'owner@example.com', password: 'password-123' });
  const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'owner@example.com', password: 'password-123' } });
  const token = login.json<{ token: string }>().token;
  const createBase = (name: string) =>
    app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers: { authorization: `Token ${token}` }, payload: { name } });
  return { app, container, file, lines, createBase };
}

describe('database faults on SQLite', () => {
  let dir: string;
  let app: FastifyInstance;
  let container: Container;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'basegate-faults-'));
  });
  afterEach(async () => {
    await app?.close();
    await container?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a write waits for a lock another process holds briefly, then succeeds', async () => {
    const f = await fileApp(dir, 5_000);
    ({ app, container } = f);
    const holder = await holdSqliteWriteLock(f.file, 200);
    const res = await f.createBase('after-the-lock');
    expect(res.statusCode).toBe(201);
    await holder.done;
  });

  it('a write blocked longer than the busy timeout gets 503 with Retry-After and changes nothing', async () => {
    const f = await fileApp(dir, 300);
    ({ app, container } = f);
    const holder = await holdSqliteWriteLock(f.file, 3_000);
    const res = await f.createBase('while-locked');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error_msg: expect.stringMatching(/busy/i) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(f.lines.join('')).toMatch(/SQLITE_BUSY/);
    await holder.done;
    const list = await container.db.selectFrom('bases').select('name').where('name', '=', 'while-locked').execute();
    expect(list).toEqual([]);
    expect((await f.createBase('while-locked')).statusCode).toBe(201);
  });

  it('a full database answers 507 and logs SQLITE_FULL, not a failed rollback', async () => {
    const f = await fileApp(dir, 5_000);
    ({ app, container } = f);
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(container.db);
    await sql.raw(`pragma max_page_count = ${rows[0]!.page_count}`).execute(container.db);
    let res = await f.createBase('b-0');
    for (let i = 1; i < 500 && res.statusCode === 201; i++) res = await f.createBase(`b-${i}-${'x'.repeat(200)}`);
    expect(res.statusCode).toBe(507);
    expect(res.json()).toEqual({ error_msg: expect.stringMatching(/space/i) });
    expect(res.headers['retry-after']).toBeDefined();
    const log = f.lines.join('');
    expect(log).toMatch(/SQLITE_FULL/);
    expect(log).not.toMatch(/cannot rollback/);
    // Reads keep working on a full database.
    expect((await app.inject({ method: 'GET', url: '/health/ready/' })).statusCode).toBe(200);
  });
});
