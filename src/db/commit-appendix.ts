import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { WriteStatement } from './write-statement.js';

/**
 * Statements that must commit together with the write of an async context — the audit row of an
 * audited request (modules/audit, plugins/audit-trail.ts) — without the module that writes being
 * told. A request opens a `CommitScope` and sets its appendix; the first transaction of that context
 * that wrote something runs the appendix just before its COMMIT, so both commit or neither does. A
 * lone write statement (no transaction) in the scope is wrapped in a transaction for the same reason.
 * Outside a scope, or once the appendix is written, the driver adds nothing but one lookup.
 */
export interface CommitAppendix {
  /** Runs inside the transaction, before COMMIT; `tx` sees the transaction's own changes. */
  write(tx: AppendixTx): Promise<void>;
  /**
   * Adds the appendix as parts of a write sent as ONE statement (db/write-statement.ts), under its
   * gate, so both commit together in that statement (no transaction, no extra round trip). False when
   * it cannot (it would read through a transaction, or the engine has no such statement): the writer
   * then sends its write in a transaction, whose COMMIT carries the appendix as usual. The writer
   * marks the scope written (`CommitScope.markWritten`) once the statement committed.
   */
  addTo?(statement: WriteStatement): Promise<boolean>;
}

export interface AppendixTx {
  run<R = Record<string, unknown>>(query: CompiledQuery): Promise<QueryResult<R>>;
  /** The id of the first row this context inserted into `table` (a created object), if any. */
  insertedId(table: string): number | undefined;
}

/** Scopes opened and not yet ended; the context tracking is on only while there are any. */
let openScopes = 0;

export class CommitScope {
  appendix: CommitAppendix | undefined;
  /** True once the appendix committed with a write. */
  written = false;
  readonly inserted = new Map<string, number>();
  private open = false;
  /** A write of the scope is carrying the appendix (claimed, not yet committed or given back). */
  private claimed = false;

  /**
   * The appendix, for the one write that asks first: undefined once another write claimed it (and
   * has not given it back), once it is written, or when there is none. Two writes of one context
   * that commit at once (two transactions on two connections, two one-statement appends) would
   * otherwise both carry it; the check and the mark have no await between them, so the first claim wins.
   */
  claim(): CommitAppendix | undefined {
    if (this.claimed || this.written || !this.appendix) return undefined;
    this.claimed = true;
    return this.appendix;
  }

  /** The claimant's write did not commit (rolled back, or the appendix could not go with it): a later write may carry it. */
  unclaim(): void {
    this.claimed = false;
  }

  /** Runs `fn` (and everything it starts) in this scope, until `end()`. */
  run<T>(fn: () => T): T {
    if (!this.open) {
      this.open = true;
      openScopes += 1;
    }
    return storage.run(this, fn);
  }

  /** The appendix committed (as a part of a one-statement write, see `CommitAppendix.addTo`): the scope is done. */
  markWritten(): void {
    this.written = true;
    this.claimed = false;
    this.end();
  }

  /**
   * No later write carries the appendix. When no scope is open any more, the context tracking is
   * switched off: on Node 20 it costs every promise of the process a hook while on, and audited
   * requests are rare, so other requests do not pay for it.
   */
  end(): void {
    this.appendix = undefined;
    if (!this.open) return;
    this.open = false;
    openScopes -= 1;
    if (openScopes === 0) storage.disable();
  }
}

const storage = new AsyncLocalStorage<CommitScope>();

/** Runs `fn` in `scope` and ends the scope when it is done. */
export async function withCommitScope<T>(scope: CommitScope, fn: () => Promise<T>): Promise<T> {
  try {
    return await scope.run(fn);
  } finally {
    scope.end();
  }
}

/**
 * The scope whose appendix this context's next write would carry, if any. A writer that sends a
 * statement outside a transaction (and outside the scope: `outsideCommitScope`) adds the appendix to
 * it itself (`CommitAppendix.addTo`), or sends its write in a transaction instead.
 */
export function pendingCommitScope(): CommitScope | undefined {
  return openScopes === 0 ? undefined : pendingScope();
}

/** Runs `fn` outside any scope: its transactions never carry another context's appendix. */
export function outsideCommitScope<T>(fn: () => T): T {
  return storage.exit(fn);
}

const WRITE_NODES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);
const RAW_WRITE = /^\s*(insert|update|delete|replace|merge)\b/i;
/** A statement with data-modifying CTEs (PostgreSQL, db/write-statement.ts): `WITH a AS (INSERT …) SELECT …`. */
const RAW_WITH_WRITE = /^\s*with\b[\s\S]*?\b(insert\s+into|update\s+\S+\s+set|delete\s+from)\b/i;

function isWrite(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  return WRITE_NODES.has(kind) || (kind === 'RawNode' && (RAW_WRITE.test(query.sql) || RAW_WITH_WRITE.test(query.sql)));
}

/** The scope whose appendix is still to be written, if the current context has one. */
function pendingScope(): CommitScope | undefined {
  const scope = storage.getStore();
  return scope?.appendix && !scope.written ? scope : undefined;
}

function noteInsert(scope: CommitScope, query: CompiledQuery, result: QueryResult<unknown>): void {
  if (query.query.kind !== 'InsertQueryNode') return;
  const table = (query.query as { into?: { table?: { identifier?: { name?: string } } } }).into?.table?.identifier?.name;
  if (!table || scope.inserted.has(table)) return;
  const first = result.rows[0] as { id?: unknown } | undefined;
  const id = Number(first?.id ?? result.insertId);
  if (Number.isSafeInteger(id)) scope.inserted.set(table, id);
}

/** A connection that knows whether it is in a transaction and whether that transaction wrote. */
class TrackedConnection implements DatabaseConnection {
  inTransaction = false;
  wrote = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: AppendixDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const scope = pendingScope();
    if (!scope || !isWrite(query)) return this.inner.executeQuery<R>(query);
    if (this.inTransaction) {
      this.wrote = true;
      const result = await this.inner.executeQuery<R>(query);
      noteInsert(scope, query, result);
      return result;
    }
    // A lone write of the scope: in a transaction of its own, so the appendix commits with it.
    await this.driver.beginTransaction(this, {});
    try {
      const result = await this.inner.executeQuery<R>(query);
      this.wrote = true;
      noteInsert(scope, query, result);
      await this.driver.commitTransaction(this);
      return result;
    } catch (error) {
      if (this.inTransaction) await this.driver.rollbackTransaction(this);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class AppendixDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TrackedConnection(await this.inner.acquireConnection(), this);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const tracked = connection as TrackedConnection;
    await this.inner.beginTransaction(tracked.inner, settings);
    tracked.inTransaction = true;
    tracked.wrote = false;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const tracked = connection as TrackedConnection;
    const scope = tracked.wrote ? pendingScope() : undefined;
    // Claimed before the first await: a transaction of the same context committing meanwhile commits without it.
    const appendix = scope?.claim();
    if (!scope || !appendix) {
      await this.inner.commitTransaction(tracked.inner);
      tracked.inTransaction = false;
      return;
    }
    try {
      await appendix.write({
        run: <R>(query: CompiledQuery) => tracked.inner.executeQuery<R>(query),
        insertedId: (table) => scope.inserted.get(table),
      });
      await this.inner.commitTransaction(tracked.inner);
    } catch (error) {
      scope.unclaim(); // the transaction rolls back: a later write of the scope may carry the row
      throw error;
    }
    tracked.inTransaction = false;
    // Nothing later in the context can carry the row: stop tracking it now, not at the response.
    scope.markWritten();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const tracked = connection as TrackedConnection;
    tracked.inTransaction = false;
    await this.inner.rollbackTransaction(tracked.inner);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.inner.savepoint!((connection as TrackedConnection).inner, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.inner.rollbackToSavepoint!((connection as TrackedConnection).inner, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.inner.releaseSavepoint!((connection as TrackedConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((connection as TrackedConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with commit appendices (see CommitAppendix). */
export function withCommitAppendix(dialect: Dialect): Dialect {
  return {
    createDriver: () => new AppendixDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
  };
}
