import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connect, type DbHandle, type DialectName } from '../../src/db/index.js';

/**
 * The dialects every database-backed suite runs on: SQLite always, PostgreSQL too when
 * TEST_DATABASE_URL is set; TEST_DIALECTS (e.g. `postgres`) narrows the list, as .ci/run's second pass does.
 * Use as `describe.each(DIALECTS)('… (%s)', (dialect) => …)`.
 */
export const DIALECTS: DialectName[] = selectDialects();

function selectDialects(): DialectName[] {
  const available: DialectName[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  const wanted = process.env.TEST_DIALECTS?.split(',').map((d) => d.trim());
  if (!wanted) return available;
  const chosen = available.filter((d) => wanted.includes(d));
  if (chosen.length === 0) throw new Error(`TEST_DIALECTS=${process.env.TEST_DIALECTS} names no available dialect`);
  return chosen;
}

/**
 * A fresh, empty database: SQLite in memory, or a PostgreSQL schema of its own (dropped on close),
 * so suites running in parallel never see each other's rows.
 */
export async function createTestDatabase(dialect: DialectName): Promise<DbHandle> {
  if (dialect === 'sqlite') return connect({ databaseUrl: 'sqlite::memory:', dataDir: '/nonexistent' });
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const handle = connect({ databaseUrl: url, dataDir: '/nonexistent', pgSchema: schema, poolSize: 5 });
  return {
    ...handle,
    async close() {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/**
 * One database several app instances open, each with connections of its own, as processes
 * sharing a SQLite file or a PostgreSQL schema do (restart and multi-instance tests).
 */
export class SharedDatabase {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'basegate-shared-'));
  private readonly schema = `t_${randomBytes(6).toString('hex')}`;
  private schemaCreated = false;

  constructor(readonly dialect: DialectName) {}

  async open(): Promise<DbHandle> {
    if (this.dialect === 'sqlite') return connect({ databaseUrl: `sqlite:${path.join(this.dir, 'shared.sqlite3')}`, dataDir: this.dir });
    const url = process.env.TEST_DATABASE_URL!;
    if (!this.schemaCreated) {
      await this.admin(`CREATE SCHEMA ${this.schema}`);
      this.schemaCreated = true;
    }
    return connect({ databaseUrl: url, dataDir: this.dir, pgSchema: this.schema, poolSize: 5 });
  }

  async dispose(): Promise<void> {
    if (this.schemaCreated) await this.admin(`DROP SCHEMA ${this.schema} CASCADE`);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private admin(statement: string): Promise<void> {
    return adminQuery(statement);
  }
}

/** Runs one statement on TEST_DATABASE_URL over a connection of its own (schema set-up and clean-up). */
export async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
