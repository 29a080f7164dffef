import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SQLITE_TICK_FUNCTION } from '../../db/index.js';
import { ThreadPool, type ThreadOwner } from '../../shared/thread-pool.js';
import { READER_THREAD_SOURCE } from './reader-thread.js';

const require = createRequire(import.meta.url);

/** Heap of one SQL thread. */
export const THREAD_HEAP_MB = 256;

export interface StatementCost {
  terms: number;
  inValues: number;
}

export interface ThreadParse {
  cost: StatementCost;
  json: string | null;
}

export { ThreadTimeoutError as SqlTimeoutError, type ThreadOwner } from '../../shared/thread-pool.js';

type Job = { kind: 'parse'; text: string; options: unknown; maxTerms: number; maxInValues: number } | { kind: 'query'; sql: string; parameters: readonly unknown[]; snapshot?: Buffer };

export interface SqlThreadsOptions {
  threads: number;
  timeoutMs: number;
  /** The SQLite file the threads read (null: no queries off the main thread, e.g. an in-memory database). */
  sqliteFile: () => Promise<string | null>;
  /**
   * A SQLite database in memory (no file to open): a copy of it, taken when a query is asked for and
   * sent along, so its SELECTs also run on a thread under the time limit (DbHandle.snapshot).
   */
  sqliteSnapshot?: () => Buffer;
}

/**
 * The SQL module's threads (a ThreadPool running reader-thread.ts): they parse statements and run
 * SQLite SELECTs under SQL_TIMEOUT_MS. SELECTs call back once per row (interruptible.ts), so a
 * terminated thread stops at the next row and its slot is reused once it has exited. Jobs name their
 * base: one base holds at most half the threads.
 */
export class SqlThreads {
  private readonly pool: ThreadPool;
  private file: Promise<string | null> | null = null;

  constructor(private readonly options: SqlThreadsOptions) {
    this.pool = new ThreadPool({ threads: options.threads, name: 'SQL thread', rebuildError, start: () => this.startThread() });
  }

  /** Threads one owner may hold at once. */
  get sharePerOwner(): number {
    return this.pool.sharePerOwner;
  }

  get enabled(): boolean {
    return this.pool.enabled;
  }

  /** Whether compiled SELECTs can run off the main thread (SQLite on a file, or in memory with snapshots). */
  async canQuery(): Promise<boolean> {
    if (!this.enabled) return false;
    this.file ??= this.options.sqliteFile();
    return (await this.file) !== null || this.options.sqliteSnapshot !== undefined;
  }

  /** Parse on a thread; the tree comes back (as JSON text) only when its cost is within the limits. */
  parse(text: string, options: unknown, limits: { maxTerms: number; maxInValues: number }, owner?: ThreadOwner): Promise<ThreadParse> {
    return this.run({ kind: 'parse', text, options, ...limits }, owner) as Promise<ThreadParse>;
  }

  /** Whether compiled SELECTs can run off the main thread on the database file (not on copies of a database in memory). */
  async readsFile(): Promise<boolean> {
    if (!this.enabled) return false;
    this.file ??= this.options.sqliteFile();
    return (await this.file) !== null;
  }

  /** A compiled SELECT on a thread, within `timeoutMs` (default: the SQL time limit). */
  async query(sql: string, parameters: readonly unknown[], owner?: ThreadOwner, timeoutMs = this.options.timeoutMs): Promise<Array<Record<string, unknown>>> {
    this.file ??= this.options.sqliteFile();
    // Taken now, so the query sees every write committed before it was asked for.
    const snapshot = (await this.file) === null ? this.options.sqliteSnapshot?.() : undefined;
    return this.pool.run({ kind: 'query', sql, parameters, snapshot }, timeoutMs, owner) as Promise<Array<Record<string, unknown>>>;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private run(job: Job, owner: ThreadOwner | undefined): Promise<unknown> {
    return this.pool.run(job, this.options.timeoutMs, owner);
  }

  private async startThread(): Promise<Worker> {
    this.file ??= this.options.sqliteFile();
    const sqliteFile = await this.file;
    return new Worker(READER_THREAD_SOURCE, {
      eval: true,
      workerData: { parserPath: require.resolve('node-sql-parser/build/mysql'), sqlitePath: require.resolve('better-sqlite3'), sqliteFile, tickFunction: SQLITE_TICK_FUNCTION },
      // A statement nested deeply enough to exhaust this stack is a RangeError ("nested too deeply"), as on the main thread.
      // A heap of its own: a statement that needs more memory fails alone instead of the process.
      resourceLimits: { stackSizeMb: 4, maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
  }
}

function rebuildError(fields: Record<string, unknown>): Error {
  const message = typeof fields.message === 'string' ? fields.message : 'SQL thread error';
  const error = fields.name === 'RangeError' ? new RangeError(message) : new Error(message);
  if (fields.code !== undefined) Object.assign(error, { code: fields.code });
  if (fields.location !== undefined) Object.assign(error, { location: fields.location });
  return error;
}
