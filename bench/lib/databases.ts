/** A throwaway database for one benchmark run: a SQLite file, or a PostgreSQL database of its own. */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { connect, type DbHandle, type DialectName } from '../../src/db/index.js';

export interface BenchDatabase {
  handle: DbHandle;
  /** The DATABASE_URL another process can open the same database with. */
  url: string;
  /** Drops the PostgreSQL database (close `handle` first); nothing to do for SQLite. */
  dispose(): Promise<void>;
}

export async function benchDatabase(
  dialect: DialectName,
  dir: string,
  options: { pgUrl: string | null; poolSize?: number },
): Promise<BenchDatabase> {
  if (dialect === 'sqlite') {
    const file = path.join(dir, `bench-${randomBytes(3).toString('hex')}.sqlite3`);
    return { handle: connect({ databaseUrl: `sqlite:${file}`, dataDir: dir }), url: `sqlite:${file}`, dispose: async () => {} };
  }
  if (!options.pgUrl) throw new Error('PostgreSQL benchmark needs BENCH_DATABASE_URL');
  // A database of its own (not a schema): migrations then never see tables of concurrent test runs.
  const name = `basegate_bench_${randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: options.pgUrl! });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(options.pgUrl);
  url.pathname = `/${name}`;
  const handle = connect({ databaseUrl: url.toString(), dataDir: dir, poolSize: options.poolSize ?? 5 });
  return { handle, url: url.toString(), dispose: () => admin(`DROP DATABASE ${name}`) };
}

/**
 * A new schema in the PostgreSQL database of `pgUrl`, named `<prefix>_<time>`, and the DATABASE_URL
 * that opens it (its search_path set), for a server process a bench starts. (Left in place after the run.)
 */
export async function benchSchemaUrl(pgUrl: string, prefix: string): Promise<string> {
  const schema = `${prefix}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`).finally(() => admin.end());
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
