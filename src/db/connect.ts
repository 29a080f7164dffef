import { preparedName } from './prepared.js';
import { isLongStatement, LONG_STATEMENT_MS } from './long-statements.js';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, DialectName } from './database.js';
import { ImmediateSqliteDialect } from './sqlite-dialect.js';
import { RevisionChannel } from './revision-channel.js';
import { withCommitAppendix } from './commit-appendix.js';

export interface DbHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /**
   * A number that moves whenever another connection (another process) commits to the database,
   * read without I/O; absent where the engine cannot tell that cheaply (PostgreSQL). Caches use it
   * to skip a query per read while nobody else writes (SQLite's `PRAGMA data_version`).
   */
  externalChanges?: () => number;
  /**
   * SQLite in memory only: a copy of the database, so SQL threads can run SELECTs on it (they cannot
   * open another process's memory); absent for database files and PostgreSQL.
   */
  snapshot?: () => Buffer;
  /**
   * PostgreSQL: bases' revision changes heard over LISTEN/NOTIFY (connects on first use), so cached
   * whole-base reads skip the revision query while it listens (db/revision-channel.ts).
   */
  revisionChannel?: RevisionChannel;
  /** Where connection errors of idle or checked-out PostgreSQL connections are logged (default: stderr). */
  useLogger?(log: ConnectionLog): void;
  close(): Promise<void>;
}

export interface ConnectionLog {
  warn(obj: object, msg: string): void;
}

export interface ConnectOptions {
  /** `postgres://…`, `sqlite:<file>`, `sqlite::memory:`, or null for `<dataDir>/basegate.sqlite3`. */
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL schema to use (tests isolate themselves in a schema of their own). */
  pgSchema?: string;
  poolSize?: number;
  /** Longest wait for a connection or a pool slot (PostgreSQL) or for the write lock (SQLite); default 5000. */
  connectTimeoutMs?: number;
  /** Longest a statement may run (PostgreSQL `statement_timeout`, and a client-side read timeout); default 30000. */
  statementTimeoutMs?: number;
  /** PostgreSQL `max_parallel_workers_per_gather` of every connection (PG_PARALLEL_WORKERS); default 0. */
  pgParallelWorkers?: number;
  /** PostgreSQL `jit` of every connection (PG_JIT); default off. */
  pgJit?: boolean;
}

/**
 * The settings every PostgreSQL connection of basegate starts with (the `options` startup parameter):
 * the schema, and the planner's parallel workers and JIT, both off by default. A request's statement
 * reads a page through an index; with either on, a misjudged estimate for a filter on cells turned a
 * 0.5-ms page into a parallel scan of every table's rows, and JIT compiled for 40–50 ms before the first
 * row (docs/operations.md).
 */
export function postgresSessionOptions(options: Pick<ConnectOptions, 'pgSchema' | 'pgParallelWorkers' | 'pgJit'>): string {
  const settings = [`max_parallel_workers_per_gather=${Math.max(0, Math.floor(options.pgParallelWorkers ?? 0))}`, `jit=${options.pgJit ? 'on' : 'off'}`];
  if (options.pgSchema) settings.unshift(`search_path=${options.pgSchema}`);
  return settings.map((s) => `-c ${s}`).join(' ');
}

/** After this long without an answer past the statement timeout the connection is presumed stalled. */
const READ_TIMEOUT_MARGIN_MS = 2_000;

// int8 (COUNT(*), bigint timestamps) as JS numbers; every value we store fits in 2^53.
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A SQLite function that does nothing (returns 1). The SQL module calls it for every row a SELECT
 * looks at, so a SQL thread terminated at the time limit stops at the next row instead of running the
 * statement to its end (a terminated thread's JavaScript cannot run again). Registered on every
 * connection, so the same statements also run here.
 */
export const SQLITE_TICK_FUNCTION = 'basegate_tick';

export function registerSqliteTick(database: { function(name: string, options: { deterministic: boolean; varargs: boolean }, fn: () => number): unknown }): void {
  database.function(SQLITE_TICK_FUNCTION, { deterministic: false, varargs: true }, () => 1);
}

export function connect(options: ConnectOptions): DbHandle {
  const url = options.databaseUrl;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  if (url && /^postgres(ql)?:\/\//.test(url)) return connectPostgres(url, options, connectTimeoutMs);
  const file = sqliteFile(url, options.dataDir);
  if (!url?.startsWith('sqlite:')) mkdirSync(options.dataDir, { recursive: true });
  const database = new SQLite(file);
  restrictFileModes(file);
  database.pragma('journal_mode = WAL');
  // No synchronous wait for another process's lock: the dialect waits asynchronously (sqlite-dialect.ts).
  database.pragma('busy_timeout = 0');
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  registerSqliteTick(database);
  cachePreparedStatements(database);
  const db = new Kysely<Database>({ dialect: withCommitAppendix(new ImmediateSqliteDialect(database, connectTimeoutMs)) });
  // Synchronous and cheap (no file locks in practice, unlike a SELECT's read transaction). While this
  // connection has a transaction open (a write in progress), it notices other connections' commits
  // only when that transaction ends.
  const dataVersion = database.prepare('pragma data_version').pluck();
  const inMemory = file === ':memory:' || file === '';
  return {
    db,
    dialect: 'sqlite',
    externalChanges: () => dataVersion.get() as number,
    ...(inMemory ? { snapshot: () => database.serialize() } : {}),
    close: () => db.destroy(),
  };
}

/** The SQLite database file of a configuration: `sqlite:<file>` (`:memory:` when empty), else `<dataDir>/basegate.sqlite3`. */
export function sqliteFile(databaseUrl: string | null | undefined, dataDir: string): string {
  if (databaseUrl?.startsWith('sqlite:')) return databaseUrl.slice('sqlite:'.length) || ':memory:';
  return path.join(dataDir, 'basegate.sqlite3');
}

/**
 * A pool whose waits are bounded (connect, pool slot, statement, a stalled socket) and whose lost
 * connections never end the process: pg emits `error` on the pool (idle clients) and on checked-out
 * clients, and an unheard `error` event is fatal in Node. A lost client is dropped by the pool, and
 * the next query connects again, so service resumes by itself when the database returns.
 */
function connectPostgres(url: string, options: ConnectOptions, connectTimeoutMs: number): DbHandle {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  let log: ConnectionLog = {
    warn: (obj, msg) => process.stderr.write(`${msg}: ${(obj as { err?: Error }).err?.message ?? ''}\n`),
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types: pgTypes,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + READ_TIMEOUT_MARGIN_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    options: postgresSessionOptions(options),
  });
  pool.on('error', (err) => log.warn({ err }, 'database connection lost (idle)'));
  pool.on('connect', (client) => {
    client.on('error', (err) => log.warn({ err }, 'database connection lost'));
    // A query that timed out on the client may still be running on a stalled socket: drop the
    // connection rather than hand it out again with the stale query ahead of the next one.
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      // A marked text (prepared.ts) goes as a named statement: parsed and planned once per connection.
      const name = typeof args[0] === 'string' ? preparedName(args[0]) : undefined;
      // A text marked long (long-statements.ts: an index build, VACUUM) waits as long as its statement timeout allows.
      const long = typeof args[0] === 'string' && isLongStatement(args[0]);
      const result =
        name !== undefined
          ? query({ name, text: args[0], values: args[1] }, ...args.slice(2))
          : long
            ? query({ text: args[0], values: args[1], query_timeout: LONG_STATEMENT_MS + READ_TIMEOUT_MARGIN_MS }, ...args.slice(2))
            : query(...args);
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(undefined, (err: Error) => {
          if (err?.message === 'Query read timeout') (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        });
      }
      return result;
    }) as typeof client.query;
  });
  const db = new Kysely<Database>({ dialect: withCommitAppendix(new PostgresDialect({ pool })) });
  const revisionChannel = new RevisionChannel(
    {
      connectionString: url,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    },
    { warn: (obj, msg) => log.warn(obj, msg) },
  );
  return {
    db,
    dialect: 'postgres',
    revisionChannel,
    useLogger: (next) => {
      log = next;
    },
    close: async () => {
      await revisionChannel.close();
      await db.destroy();
    },
  };
}

/**
 * A database file (and its WAL and shared-memory files, which SQLite creates with the database
 * file's mode) readable by its owner only: 0600, whatever the process umask. Best effort: a file
 * owned by someone else keeps its mode.
 */
function restrictFileModes(file: string): void {
  if (file === ':memory:' || file === '' || file.startsWith('file:')) return;
  for (const name of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      chmodSync(name, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw error;
    }
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running the small
 * queries of a hot path. Reuse prepared statements by SQL text (a bounded LRU); a statement still
 * busy (an open iterator) is never handed out twice.
 */
function cachePreparedStatements(database: SQLite.Database): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, SQLite.Statement>();
  database.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached && !cached.busy) {
      cache.delete(source);
      cache.set(source, cached);
      return cached;
    }
    const statement = prepare(source);
    cache.set(source, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return statement;
  }) as typeof database.prepare;
}

/** True when `error` is a unique-constraint violation on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * True when PostgreSQL gave up on a transaction because of a concurrent one (40001 serialization failure,
 * 40P01 deadlock): the whole transaction may be run again.
 */
export function isSerializationFailure(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '40001' || e?.code === '40P01';
}

/** True when `error` is a foreign-key violation on either engine. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
