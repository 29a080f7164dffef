import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Database, Db } from '../../db/index.js';
import { badRequest } from '../../shared/errors.js';
import { ThreadTimeoutError, type ThreadOwner } from '../../shared/thread-pool.js';

/**
 * Listing reads of big SQLite tables on reader threads (docs/base-data.md, "Reads off the event loop").
 *
 * better-sqlite3 runs a statement on the calling thread to its end. A listing whose filter no index
 * narrows reads its table until its page is full: a term only the last rows of 10,000,000 hold took
 * 11 s, and for those seconds the event loop served no one else. Such reads run on the SQL module's
 * threads instead (each with its own read-only connection to the database file; WAL lets them read
 * beside the writer), under the base's share of them and a time limit; cheap reads stay here, where a
 * hop to a thread would cost more than the read.
 */

/** What runs a compiled SQLite SELECT on another thread: the SQL module's threads (sql/sql-threads.ts), wired by the container. */
export interface ReaderThreads {
  /** Whether reads can run there on the database file (not for a database in memory, which each read would copy). */
  readsFile(): Promise<boolean>;
  query(sql: string, parameters: readonly unknown[], owner: ThreadOwner, timeoutMs: number): Promise<Array<Record<string, unknown>>>;
}

export interface ThreadReadOptions {
  threads: ReaderThreads;
  /** Longest a read may take, its wait for a thread included (DATABASE_STATEMENT_TIMEOUT_MS, as PostgreSQL's statement_timeout). */
  timeoutMs: number;
  /** Tables with fewer rows are read here (a scan of them is short). */
  minRows: number;
  /** Ids of an unsorted listing read here before its read goes to a thread (RowsService `nearFirst`). */
  nearIds: number;
}

/** The ids `nearIds` covers by default: a filter matching 1% of a bulk-written table fills a page of 100 within them. */
export const DEFAULT_NEAR_IDS = 20_000;

/** Tables this big are read on a thread when a read may scan them: the row indexes' "big" too (a scan of fewer takes under about 20 ms). */
export const DEFAULT_THREAD_READ_MIN_ROWS = 20_000;

/**
 * A Kysely instance whose statements run on the reader threads as `owner` (the base): the rows
 * repository's functions take it as they take the database. Reads only: it has no transactions.
 * A read over its time limit fails as SQLite's own interrupted statement does (`SQLITE_INTERRUPT`),
 * which the error handler answers with 503 and `Retry-After` (db/faults.ts).
 */
export function threadReader(options: ThreadReadOptions, owner: ThreadOwner, onRead: () => void): Db {
  const connection = new ThreadConnection(options, owner, onRead);
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new ThreadDriver(connection),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}

export const PAGE_TOO_LARGE = 'The rows of this page are too large to read at once; ask for fewer rows (limit).';

/** A statement of a listing read that ran past its time limit on a reader thread. */
export class ThreadReadTimeout extends Error {
  readonly code = 'SQLITE_INTERRUPT';
  constructor(limitMs: number, options: { cause: unknown }) {
    super(`a listing read ran past ${limitMs} ms on a reader thread`, options);
    this.name = 'ThreadReadTimeout';
  }
}

class ThreadConnection implements DatabaseConnection {
  constructor(
    private readonly options: ThreadReadOptions,
    private readonly owner: ThreadOwner,
    private readonly onRead: () => void,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    this.onRead();
    try {
      const rows = await this.options.threads.query(compiled.sql, compiled.parameters, this.owner, this.options.timeoutMs);
      return { rows: rows as R[] };
    } catch (error) {
      if (error instanceof ThreadTimeoutError) throw new ThreadReadTimeout(error.limitMs, { cause: error });
      // The page's rows did not fit the thread's heap (sql-threads.ts THREAD_HEAP_MB): only that thread is lost.
      if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') throw badRequest(PAGE_TOO_LARGE);
      throw error;
    }
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('reader threads do not stream');
  }
}

class ThreadDriver implements Driver {
  constructor(private readonly connection: ThreadConnection) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }

  async beginTransaction(): Promise<void> {
    throw new Error('reader threads have no transactions');
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {}
}
