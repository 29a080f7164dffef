import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { connect, migrateToLatest, type DbHandle, type DialectName } from '../../src/db/index.js';

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
export async function createTestDatabase(dialect: DialectName, options: { migrated?: boolean } = {}): Promise<DbHandle> {
  if (dialect === 'sqlite') return connect({ databaseUrl: 'sqlite::memory:', dataDir: '/nonexistent' });
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const ddl = options.migrated ? await migratedSchemaScript() : undefined;
  await adminQuery(ddl ? ddl.replaceAll(TEMPLATE_PLACEHOLDER, schema) : `CREATE SCHEMA ${schema}`);
  const handle = connect({ databaseUrl: url, dataDir: '/nonexistent', pgSchema: schema, poolSize: 5 });
  return {
    ...handle,
    async close() {
      await handle.close();
      await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

/**
 * A fresh PostgreSQL schema with every migration applied, made by replaying one script instead of
 * running the migrations: each worker migrates a template schema once, dumps it with pg_dump (schema
 * and rows, so the migration records come along) and replays the dump under each new schema's name.
 * Kysely's migrator reads the catalog of every schema, which costs seconds per app once hundreds of
 * test schemas exist side by side; the replay is one round trip. Without pg_dump, null: migrate.
 */
let migratedScript: Promise<string | null> | undefined;
const TEMPLATE_PLACEHOLDER = `tpl_${randomBytes(8).toString('hex')}`;

function migratedSchemaScript(): Promise<string | null> {
  migratedScript ??= dumpMigratedTemplate().catch(() => null);
  return migratedScript;
}

async function dumpMigratedTemplate(): Promise<string> {
  const url = process.env.TEST_DATABASE_URL!;
  await adminQuery(`CREATE SCHEMA ${TEMPLATE_PLACEHOLDER}`);
  try {
    const handle = connect({ databaseUrl: url, dataDir: '/nonexistent', pgSchema: TEMPLATE_PLACEHOLDER, poolSize: 1 });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    const { stdout } = await promisify(execFile)(
      'pg_dump',
      ['--dbname', url, '--schema', TEMPLATE_PLACEHOLDER, '--no-owner', '--no-privileges', '--inserts'],
      { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
    );
    // psql meta-commands (`\restrict`, newer pg_dump versions) are not SQL.
    const script = stdout.split('\n').filter((line) => !line.startsWith('\\')).join('\n');
    if (!script.includes(`CREATE SCHEMA ${TEMPLATE_PLACEHOLDER};`)) throw new Error('pg_dump gave no schema');
    return script;
  } finally {
    await adminQuery(`DROP SCHEMA IF EXISTS ${TEMPLATE_PLACEHOLDER} CASCADE`);
  }
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

/**
 * A PostgreSQL database of its own on TEST_DATABASE_URL's server, for a whole server process started by a
 * test (the console's end-to-end tests: a server takes a database URL, not a schema). Dropped by `drop`.
 */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `e2e_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
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
