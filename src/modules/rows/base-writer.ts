import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { WriteStatement, outsideCommitScope, pendingCommitScope, type CommitScope, type Database, type DialectName, type Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { appendEvents, appendEventsTo, appendStructureEvents, holdEvents, releaseHeldEvents, type NewChangeEvent } from '../events/index.js';
import { FormulaThreads } from '../formulas/index.js';
import type { BaseMetadata, TableMeta } from './metadata.js';
import { notFound } from '../../shared/errors.js';
import { POSTGRES_WRITE_SLOTS, Slots } from './write-slots.js';
import { announceRevision, concurrentAppendGate, loadMetadata, lockByRevision, lockMetadata, metadataAsRead, revisionBump, saveRevision, storeMetadata } from './metadata.repository.js';
import { KnownMetadata } from './known-metadata.js';
import { AppendBatches, APPEND_BATCH_LIMITS } from './append-batches.js';
import { NoDatabase } from './no-database.js';
import { structureOps, type StructureOp } from './structure-ops.js';

/** Statements of one base in flight at once with concurrent appends (the design's measurement used 4). */
export const CONCURRENT_IN_FLIGHT = 4;

/** The base a request addresses (from the Base-Token). */
export interface BaseRef {
  id: number;
  uuid: string;
}

export type StructureChangeListener = (base: BaseRef) => Promise<void>;

/** Runs inside the write's transaction, after the work, with the change events it emitted. */
export type EventsHook = (trx: Transaction<Database>, events: NewChangeEvent[], now: number) => Promise<void>;

/** Everything one write changed, as the operation log keeps it. */
export interface WriteRecord {
  base: BaseRef;
  actor: Actor;
  writeId: string;
  now: number;
  events: NewChangeEvent[];
  /** Tables, columns and views added, changed or deleted. */
  structure: StructureOp[];
}

/**
 * Runs inside the write's transaction, last before its events are appended. `statement`: the write is
 * sent as one statement (PostgreSQL appends, see BaseWriter) and `trx` answers no query: add the log's
 * writes to it.
 */
export type WriteLogHook = (trx: Transaction<Database>, write: WriteRecord, statement?: WriteStatement) => Promise<void>;

/**
 * A table about to be deleted, inside the deleting write (the history module keeps it in its trash).
 * When a hook is registered the table's rows and links are not deleted: they stay stored under the
 * table's id and its link ids, which no read names once the table is gone from the metadata
 * (rows/kept-tables.ts), so the delete costs the same whatever the table's size. The hook owns them
 * from then on: it brings them back (RestoreScope.structure.revealTable) or purges them
 * (purgeKeptTable).
 */
export interface TableDeletion {
  trx: Transaction<Database>;
  base: BaseRef;
  actor: Actor;
  now: number;
  /** The table as it is, and the base's metadata before the delete (other tables' link columns to it). */
  table: TableMeta;
  meta: BaseMetadata;
}

export type TableDeleteHook = (deletion: TableDeletion) => Promise<void>;

/** Who writes: a user's virtual id, or an API-Token's app_name (then also `app`). */
export interface Actor {
  user: string;
  app: string | null;
  /** The account's id when the Base-Token came from a user (Account-Token or temporary API-Token): admin checks. */
  userId?: number;
  /** The id this write's events get (default: a fresh one); the live channel leaves the write's sender out of its echo by it. */
  writeId?: string;
  /** The logged operation this write reverts (the history module's restore). */
  reverts?: number;
}

export interface WriteScope {
  trx: Transaction<Database>;
  dialect: DialectName;
  base: BaseRef;
  actor: Actor;
  now: number;
  /**
   * The locked metadata; mutate it and call `metadataChanged()` to store it under the next version.
   * `contents` marks changes that leave tables, columns and views as they were (new select options,
   * auto-number counters), which need no re-check of the rules that depend on the structure.
   */
  meta: BaseMetadata;
  metadataChanged(kind?: 'structure' | 'contents'): void;
  /** Queue change events; they are appended as the transaction's last statement. */
  emit(events: NewChangeEvent[]): void;
  /** Computes formula cells within the batch time limit (large batches on formula threads). */
  formulas: FormulaThreads;
  /** The stage code new rows are stored under (see staging.ts), or undefined for visible rows. */
  stage: string | undefined;
  /**
   * Tables of a staged write that are in no metadata yet (an import's new tables): their rows are
   * stored under their own id from the start, which no read names until the publish lists the table.
   */
  unlisted?: ReadonlySet<string>;
  /**
   * The write's one statement (PostgreSQL appends that need no reads): new rows are added to it
   * instead of inserted, and `trx` answers no query (a query sends the work to a real transaction).
   */
  statement?: WriteStatement;
}

/**
 * Runs every write to a base in one transaction: lock the metadata (serializing writers of the base),
 * do the work, bump the base's revision and store changed metadata, append the change events last,
 * commit, then wake the dispatcher.
 * Any error rolls everything back, so a batch is written whole or not at all.
 */
export class BaseWriter {
  constructor(
    private readonly db: Db,
    readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly onEvents: () => void,
  ) {
    this.slots = new Slots(dialect === 'postgres' ? POSTGRES_WRITE_SLOTS : Number.MAX_SAFE_INTEGER);
    this.batches = new AppendBatches(db, this.slots);
  }

  now(): number {
    return this.clock.now();
  }

  /** IANA zone of formula date functions (TIME_ZONE); the container sets it from the configuration. */
  timeZone = 'UTC';

  /** Formula batches (FORMULA_THREADS, FORMULA_BATCH_TIMEOUT_MS); the container sets it from the configuration. */
  formulas = new FormulaThreads({ threads: 0, timeoutMs: 10_000 });

  read(base: BaseRef): Promise<BaseMetadata> {
    return loadMetadata(this.db, base.id);
  }

  private readonly structureListeners: StructureChangeListener[] = [];
  /** Write transactions in flight (unbounded on SQLite: it has one connection and one writer anyway). */
  readonly slots: Slots;
  /** The metadata of each base as this process last read it in a write: what a one-statement append works on. */
  private readonly known = new KnownMetadata();

  /** The metadata kept for one-statement appends (known-metadata.ts), for /metrics. */
  get knownMetadataStats(): { bases: number; bytes: number } {
    return this.known.stats;
  }
  /** Appends written as one statement, and those that went to a transaction after trying (tests, metrics). */
  readonly oneStatementStats = { written: 0, redone: 0 };
  /** Off: every append in a transaction, as before (a benchmark compares both in one run). */
  oneStatementAppends = true;
  /** Group commit of one-statement appends to one base (`AppendBatches`); off: each is sent alone (a benchmark compares both). */
  batchAppends = true;
  /** The one-statement appends' group commit (its `stats`: statements sent, appends carried). */
  readonly batches: AppendBatches;

  /**
   * PG_CONCURRENT_APPENDS (PostgreSQL only; the container sets it): one-statement appends of new rows
   * of one base commit side by side (docs/architecture.md, "Concurrent appends of one base"): they
   * gate on the metadata row `FOR KEY SHARE`, add to a revision stripe, take the commit-order lock
   * shared and draw their event ids as one block; up to `CONCURRENT_IN_FLIGHT` statements of a base in
   * flight. Updates, deletes, links, structure and appends in a transaction keep the exclusive order.
   */
  get concurrentAppends(): boolean {
    return this.batches.concurrent;
  }

  set concurrentAppends(on: boolean) {
    const concurrent = on && this.dialect === 'postgres';
    this.batches.concurrent = concurrent;
    this.batches.limits.inFlight = concurrent ? CONCURRENT_IN_FLIGHT : APPEND_BATCH_LIMITS.inFlight;
  }
  private readonly commitListeners: Array<(base: BaseRef) => void> = [];
  private readonly eventsHooks: EventsHook[] = [];
  private readonly logHooks: WriteLogHook[] = [];
  readonly tableDeleteHooks: TableDeleteHook[] = [];

  /** Called in the transaction of a table's delete, before its rows and links go (the table trash). */
  onTableDelete(hook: TableDeleteHook): void {
    this.tableDeleteHooks.push(hook);
  }

  /** Called in the transaction of every write that changed rows or structure (the operation log). */
  onWrite(hook: WriteLogHook): void {
    this.logHooks.push(hook);
  }

  /**
   * Called in the transaction of every write that emitted change events (e.g. notifications that must
   * commit or roll back with the write); a hook's error rolls the write back.
   */
  beforeCommit(hook: EventsHook): void {
    this.eventsHooks.push(hook);
  }

  /** Called synchronously after every committed write to a base, before the writer returns. */
  onCommitted(listener: (base: BaseRef) => void): void {
    this.commitListeners.push(listener);
  }

  /** Called after a commit that changed the base's metadata (tables, columns, views, options). */
  onStructureChanged(listener: StructureChangeListener): void {
    this.structureListeners.push(listener);
  }

  async write<T>(base: BaseRef, actor: Actor, work: (scope: WriteScope) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    const release = await this.slots.acquire();
    let outcome: { value: T; emitted: number; structural: boolean } | undefined;
    try {
      const late = options.lockLate === true && this.dialect === 'postgres';
      // A write that must carry its request's commit appendix (an audited request: db/commit-appendix.ts)
      // carries it as parts of its one statement when the appendix can be (else in a transaction, whose COMMIT carries it).
      const scope = late ? pendingCommitScope() : undefined;
      const oneStatement =
        late &&
        this.oneStatementAppends &&
        options.oneStatement !== false &&
        options.holdEvents === undefined &&
        options.stage === undefined &&
        (scope === undefined || scope.appendix?.addTo !== undefined);
      if (oneStatement) outcome = await this.oneStatement(base, actor, work, release, scope);
      try {
        outcome ??= await this.transaction(base, actor, work, late, options);
      } catch (error) {
        // Another writer changed the metadata between the unlocked read and the late lock: redo it locked.
        if (!(error instanceof StaleMetadata)) throw error;
        outcome = await this.transaction(base, actor, work, false, options);
      }
    } finally {
      release();
    }
    for (const listener of this.commitListeners) listener(base);
    if (outcome.emitted > 0) this.onEvents();
    // The write is committed: a listener's failure is its own (it logs), never the caller's.
    if (outcome.structural) for (const listener of this.structureListeners) await listener(base).catch(() => undefined);
    return outcome.value;
  }

  /**
   * Moves the events held under `holdId` (writes made with `holdEvents`) into the outbox in one
   * transaction, so consumers see the whole multi-batch write at once; `publish` runs first in that
   * transaction with the base's metadata locked (the staged rows are moved into their tables there; it
   * may change the structure, e.g. add the write's new tables, whose structure events then precede the
   * released row events), then `apply` (row writes kept for the end, such as an import's cell changes to existing rows: it
   * emits their events through the scope and calls `flush` after each page, which runs the write hooks
   * and holds the page's events, so memory stays one page), and the base's revision goes up, so cached
   * reads see the rows and the events together. Returns how many events entered the outbox.
   */
  async releaseHold(
    base: BaseRef,
    actor: Actor,
    holdId: string,
    publish?: (scope: WriteScope) => Promise<void>,
    apply?: (scope: WriteScope, flush: () => Promise<void>) => Promise<void>,
  ): Promise<number> {
    const release = await this.slots.acquire();
    let outcome: { moved: number; structural: boolean };
    try {
      outcome = await this.db.transaction().execute(async (trx) => {
        const now = this.clock.now();
        const meta = await lockMetadata(trx, this.dialect, base.id);
        const { scope, events, flags } = this.openScope(trx, base, actor, now, meta, undefined);
        if (publish) await publish(scope);
        if (apply) {
          await apply(scope, async () => {
            const page = events.splice(0);
            if (page.length === 0) return;
            for (const hook of this.eventsHooks) await hook(trx, page, now);
            const writeId = randomUUID();
            for (const hook of this.logHooks) await hook(trx, { base, actor, writeId, now, events: page, structure: [] });
            await holdEvents(trx, this.dialect, page, now, writeId, holdId);
          });
        }
        if (events.length > 0) throw new Error('releaseHold: publish or apply emitted events it did not flush');
        await saveRevision(trx, base.id, flags.changed ? meta : null);
        const structure = await this.appendStructure(trx, base, actor, meta, now, flags.changed);
        if (structure.length > 0) for (const hook of this.logHooks) await hook(trx, { base, actor, writeId: randomUUID(), now, events: [], structure });
        return { moved: await releaseHeldEvents(trx, this.dialect, holdId), structural: flags.structural };
      });
    } finally {
      release();
    }
    for (const listener of this.commitListeners) listener(base);
    if (outcome.moved > 0) this.onEvents();
    if (outcome.structural) for (const listener of this.structureListeners) await listener(base).catch(() => undefined);
    return outcome.moved;
  }

  /**
   * One write transaction. Early lock: the metadata is locked first (every writer of the base waits
   * here). Late lock (PostgreSQL appends): the metadata is read unlocked, the rows are written, and the
   * lock is taken by the revision bump just before the events and the commit, so writers of one base
   * overlap in everything but the last two round trips; a version moved meanwhile throws StaleMetadata.
   */
  private async transaction<T>(
    base: BaseRef,
    actor: Actor,
    work: (scope: WriteScope) => Promise<T>,
    late: boolean,
    options: WriteOptions,
  ): Promise<{ value: T; emitted: number; structural: boolean }> {
    const hold = options.holdEvents;
    return this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const meta = late ? await loadMetadata(trx, base.id) : await lockMetadata(trx, this.dialect, base.id);
      this.known.remember(base.id, meta);
      const readVersion = meta.version;
      const { scope, events, flags } = this.openScope(trx, base, actor, now, meta, options.stage);
      const value = await work(scope);
      if (events.length > 0) for (const hook of this.eventsHooks) await hook(trx, events, now);
      if (this.dialect === 'postgres' && !flags.changed && hold === undefined) {
        // The tail in one round trip: the revision bump (the base's lock; after a late read, gated on
        // the version read), the operation log and the events.
        const writeId = actor.writeId ?? randomUUID();
        const statement = new WriteStatement(revisionBump(base.id, late ? readVersion : undefined));
        if (events.length > 0) await this.logAlongside(trx, { base, actor, writeId, now, events, structure: [] }, statement, async () => appendEventsTo(statement, events, now, writeId));
        // A late read's version moved, or the base is gone (the locked redo tells which).
        if (!(await statement.execute(trx))) throw late ? new StaleMetadata() : notFound('dtable not found.');
        return { value, emitted: events.length, structural: false };
      }
      if (late) {
        const version = await lockByRevision(trx, base.id);
        if (version === undefined) throw notFound('dtable not found.');
        if (version !== readVersion) throw new StaleMetadata();
        if (flags.changed) await storeMetadata(trx, base.id, meta);
      } else {
        await saveRevision(trx, base.id, flags.changed ? meta : null);
      }
      const structure = await this.appendStructure(trx, base, actor, meta, now, flags.changed);
      const writeId = actor.writeId ?? randomUUID();
      const store = () => (hold !== undefined ? holdEvents(trx, this.dialect, events, now, writeId, hold) : appendEvents(trx, this.dialect, events, now, writeId));
      if (events.length === 0 && structure.length === 0) await store();
      // PostgreSQL: the log before the events, whose statement takes the commit-order lock (held to the commit).
      else if (this.dialect === 'postgres') await this.logAlongside(trx, { base, actor, writeId, now, events, structure }, undefined, async () => undefined).then(store);
      else await this.logAlongside(trx, { base, actor, writeId, now, events, structure }, undefined, store);
      return { value, emitted: hold !== undefined ? 0 : events.length, structural: flags.structural };
    });
  }

  /**
   * A PostgreSQL append in ONE statement, outside any transaction (one round trip instead of seven:
   * begin, metadata, rows, revision, log, events, commit): the work runs on the metadata this process
   * last read, its new rows, the operation log and the events become parts of one statement gated on
   * the revision bump of that metadata version (`UPDATE … WHERE version = v`), which takes the base's
   * lock only for the statement's own few milliseconds. Appends of one base that arrive while one is
   * in flight are sent together as one such statement under one bump (`AppendBatches`, group commit).
   * Undefined (nothing written) when this cannot be: no metadata known, the work asked the database
   * something, changed the metadata, failed (the real transaction then gives the real answer), the
   * version moved (the gate wrote nothing), or the shared statement it went in failed.
   */
  private async oneStatement<T>(base: BaseRef, actor: Actor, work: (scope: WriteScope) => Promise<T>, releaseSlot: () => void, audit: CommitScope | undefined) {
    const meta = this.known.get(base.id);
    if (meta === undefined) return undefined;
    const now = this.clock.now();
    const writeId = actor.writeId ?? randomUUID();
    // Its parts go under a shared gate: the revision bump of `meta.version`, one for all the appends
    // of the base sent together (AppendBatches).
    const statement = new WriteStatement('shared');
    statement.concurrent = this.concurrentAppends;
    const probe = new NoDatabase();
    let prepared: { value: T; emitted: number } | undefined;
    try {
      prepared = await probe.run(async (trx) => {
        const { scope, events, flags } = this.openScope(trx, base, actor, now, meta, undefined, statement);
        const value = await work(scope);
        if (flags.changed) return undefined;
        if (events.length > 0) {
          for (const hook of this.eventsHooks) await hook(trx, events, now);
          await this.logAlongside(trx, { base, actor, writeId, now, events, structure: [] }, statement, async () => appendEventsTo(statement, events, now, writeId));
        }
        return { value, emitted: events.length };
      });
    } catch {
      this.oneStatementStats.redone++;
      return undefined;
    }
    // The request's audit row as parts of the statement, committed with it (or, when the appendix
    // cannot be a part or fails, the write goes to a transaction, whose COMMIT carries it).
    // Claimed (db/commit-appendix.ts): another write of the request committing at once goes without it.
    const appendix = prepared !== undefined && !probe.used ? audit?.claim() : undefined;
    let sent: 'written' | 'redo' = 'redo';
    try {
      const carried = appendix === undefined || (await (appendix.addTo?.(statement) ?? Promise.resolve(false)).catch(() => false));
      if (prepared === undefined || probe.used || !carried) {
        this.oneStatementStats.redone++;
        return undefined;
      }
      // A queued append holds no connection: its slot goes back, and the batch takes one to send (AppendBatches).
      if (this.batchAppends) releaseSlot();
      // Sent outside the request's commit scope: the statement carries the appendix as its own parts, not as a transaction's.
      sent = this.batchAppends
        ? await this.batches.submit(base.id, meta.version, statement, prepared.emitted, appendix !== undefined)
        : (await outsideCommitScope(() => this.sendAlone(base.id, meta.version, statement)))
          ? 'written'
          : 'redo';
    } finally {
      // Not sent with this write: the redo's transaction (or a later write) claims it again.
      if (appendix && sent !== 'written') audit!.unclaim();
    }
    if (sent === 'redo') {
      this.known.forget(base.id);
      this.oneStatementStats.redone++;
      return undefined;
    }
    if (appendix) audit!.markWritten();
    this.oneStatementStats.written++;
    return { value: prepared.value, emitted: prepared.emitted, structural: false };
  }

  /** An append's one statement sent alone (no group commit); with concurrent appends, announced after its commit. */
  private async sendAlone(baseId: number, version: number, statement: WriteStatement): Promise<boolean> {
    if (!this.concurrentAppends) return WriteStatement.together(this.db, revisionBump(baseId, version), [statement]);
    const passed = await WriteStatement.together(this.db, concurrentAppendGate(baseId, version), [statement]);
    if (passed) await announceRevision(this.db, baseId).catch(() => undefined);
    return passed;
  }

  /**
   * Runs the log hooks and `alongside` together: a hook's compression of a large write runs on the
   * thread pool while `alongside` (the events' encoding or insert) runs here. Resolves when all are
   * done; the first failure is thrown after every one has settled (none touches the transaction after).
   */
  private async logAlongside(trx: Transaction<Database>, write: WriteRecord, statement: WriteStatement | undefined, alongside: () => Promise<unknown>): Promise<void> {
    const logged = Promise.allSettled(this.logHooks.map((hook) => hook(trx, write, statement)));
    const main = await Promise.allSettled([alongside()]);
    for (const outcome of [...main, ...(await logged)]) if (outcome.status === 'rejected') throw outcome.reason;
  }

  /** The scope a write's work runs in, with the events it emits and whether it changed the metadata (and its structure). */
  private openScope(trx: Transaction<Database>, base: BaseRef, actor: Actor, now: number, meta: WriteScope['meta'], stage: WriteScope['stage'], statement?: WriteStatement) {
    const events: NewChangeEvent[] = [];
    const flags = { changed: false, structural: false };
    const scope: WriteScope = {
      trx,
      dialect: this.dialect,
      base,
      actor,
      now,
      meta,
      metadataChanged: (kind = 'structure') => {
        flags.changed = true;
        if (kind === 'structure') flags.structural = true;
      },
      emit: (more) => {
        for (const e of more) events.push(e);
      },
      formulas: this.formulas,
      stage,
      ...(statement ? { statement } : {}),
    };
    return { scope, events, flags };
  }

  /** The structure operations of a write that changed the metadata, appended as events; returned for the log hooks. */
  private async appendStructure(trx: Transaction<Database>, base: BaseRef, actor: Actor, meta: WriteScope['meta'], now: number, changed: boolean) {
    const structure = changed ? structureOps(metadataAsRead(meta), meta) : [];
    if (structure.length > 0) {
      const ops = structure.map((op) => ({ baseId: base.id, baseUuid: base.uuid, op, opUser: actor.user, opApp: actor.app, opTime: now }));
      await appendStructureEvents(trx, this.dialect, ops, now);
    }
    return structure;
  }
}

export interface WriteOptions {
  /**
   * Take the base's lock at the end of the transaction instead of the start (PostgreSQL). For work
   * whose result does not depend on other writers' uncommitted rows: appends (new rows only).
   */
  lockLate?: boolean;
  /**
   * With `lockLate`, try the write as one statement first (the default). False for work too large to
   * risk doing twice: when the one statement cannot take it (the work asked the database something),
   * the work runs again in a transaction, and a large batch's formulas would be computed twice.
   */
  oneStatement?: boolean;
  /**
   * Store the write's change events under this hold id instead of the outbox (`releaseHold` publishes
   * them later; RowsService.undoHold undoes the rows): one part of a multi-batch write such as an import.
   */
  holdEvents?: string;
  /** Store the rows this write appends staged under this code (invisible until `releaseHold` publishes them; see staging.ts). */
  stage?: string;
}

/** The metadata moved between an unlocked read and the late lock. */
class StaleMetadata extends Error {}
