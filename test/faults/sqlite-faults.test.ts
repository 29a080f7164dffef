import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { connect, migrateToLatest } from '../../src/db/index.js';
import type { FastifyInstance } from 'fastify';
import { holdSqliteWriteLock } from './support.js';

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
