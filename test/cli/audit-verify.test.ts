import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createContainer } from '../../src/container.js';
import { migrateToLatest } from '../../src/db/index.js';
import { DIALECTS } from '../helpers/index.js';
import { baseEnv, run } from './cli-support.js';

/** A database of its own for the CLI process: a SQLite file in a fresh DATA_DIR, or a fresh PostgreSQL database. */
async function freshEnv(dialect: string, cleanups: Array<() => Promise<void>>): Promise<NodeJS.ProcessEnv> {
  const env = { ...baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-audit-'))), SECRET_KEY: 'audit-cli-secret-key-0123456789abcdef' };
  if (dialect === 'sqlite') return env;
  const url = new URL(process.env.TEST_DATABASE_URL!);
  const adminUrl = url.toString();
  const name = `audit_cli_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const drop = new pg.Client({ connectionString: adminUrl });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await drop.end();
  });
  url.pathname = `/${name}`;
  return { ...env, DATABASE_URL: url.toString() };
}

describe.each(DIALECTS)('basegate audit verify (%s)', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('exits 0 on an intact chain and 1 naming the first broken row after an edit or a deletion', async () => {
    const env = await freshEnv(dialect, cleanups);
    const c = createContainer(loadConfig(env as Record<string, string>, { persistSecret: false }));
    try {
      await migrateToLatest(c.db);
      for (let i = 1; i <= 4; i++) await c.audit.record({ action: 'test.action', actor: `user${i}@example.com`, ip: '10.0.0.1', target: `t${i}` });
    } finally {
      await c.close();
    }
    const intact = await run(['audit', 'verify'], env);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toContain('4 rows verified');

    const edit = createContainer(loadConfig(env as Record<string, string>, { persistSecret: false }));
    try {
      await sql`UPDATE audit_log SET target = 'forged' WHERE seq = 2`.execute(edit.db);
      const edited = await run(['audit', 'verify'], env);
      expect(edited.code).toBe(1);
      expect(edited.stderr).toMatch(/broken at row 2: row 2 was edited/);
      await sql`UPDATE audit_log SET target = 't2' WHERE seq = 2`.execute(edit.db);
      await sql`DELETE FROM audit_log WHERE seq = 3`.execute(edit.db);
      const deleted = await run(['audit', 'verify'], env);
      expect(deleted.code).toBe(1);
      expect(deleted.stderr).toMatch(/broken at row 3: row 3 is missing \(deleted\)/);
    } finally {
      await edit.close();
    }
    expect((await run(['audit'], env)).code).toBe(2);
  }, 120_000);
});
