import type SQLite from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

/** First and longest pause between two tries for the write lock another process holds. */
const FIRST_RETRY_MS = 5;
const MAX_RETRY_MS = 100;

/**
 * Kysely's SQLite dialect with three fixes for a database other processes write to:
 * - transactions start with `BEGIN IMMEDIATE`: a deferred `BEGIN` that later upgrades to a write
 *   fails at once with SQLITE_BUSY when another connection writes (the busy timeout is not applied
 *   to an upgrade); IMMEDIATE takes the write lock up front;
 * - waiting for that lock never blocks the event loop: SQLite's own busy timeout sleeps inside the
 *   synchronous call (nothing else of the process runs meanwhile: health checks, reads, timers), so the
 *   connection runs with `busy_timeout = 0` and a write that finds the lock taken (BEGIN, or a lone
 *   write statement) is tried again after an asynchronous pause, with the connection free for others
 *   in between, until `lockTimeoutMs`; then its SQLITE_BUSY reaches the caller (503);
 * - `ROLLBACK` is skipped when SQLite already rolled the transaction back by itself (disk full,
 *   I/O error), so the real error reaches the caller instead of "cannot rollback - no transaction is active".
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly database: SQLite.Database,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.database, this.lockTimeoutMs);
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    private readonly database: SQLite.Database,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return {
      // A lone statement (no transaction open) that needs the lock is retried like BEGIN.
      executeQuery: <R>(query: CompiledQuery) =>
        this.database.inTransaction ? connection.executeQuery<R>(query) : this.whileBusy(() => connection.executeQuery<R>(query)),
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.database.inTransaction) return;
    await super.rollbackTransaction(connection);
  }

  /**
   * Runs `attempt` until it does not fail with SQLITE_BUSY or `lockTimeoutMs` passed. Between tries
   * the connection is released (other queries run; reads never need the lock in WAL mode) and taken again.
   */
  private async whileBusy<R>(attempt: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let wait = FIRST_RETRY_MS; ; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
      try {
        return await attempt();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await this.releaseConnection();
      await pause(Math.min(wait, Math.max(0, deadline - Date.now())));
      await super.acquireConnection();
    }
  }
}
