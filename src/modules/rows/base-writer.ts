import type { Transaction } from 'kysely';
import type { Database, DialectName, Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { appendEvents, type NewChangeEvent } from '../events/index.js';
import type { BaseMetadata } from './metadata.js';
import { loadMetadata, lockMetadata, saveRevision } from './metadata.repository.js';

/** The base a request addresses (from the Base-Token). */
export interface BaseRef {
  id: number;
  uuid: string;
}

export type StructureChangeListener = (base: BaseRef) => Promise<void>;

/** Runs inside the write's transaction, after the work, with the change events it emitted. */
export type EventsHook = (trx: Transaction<Database>, events: NewChangeEvent[], now: number) => Promise<void>;

/** Who writes: a user's virtual id, or an API-Token's app_name (then also `app`). */
export interface Actor {
  user: string;
  app: string | null;
  /** The account's id when the Base-Token came from a user (Account-Token or temporary API-Token): admin checks. */
  userId?: number;
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
  ) {}

  now(): number {
    return this.clock.now();
  }

  read(base: BaseRef): Promise<BaseMetadata> {
    return loadMetadata(this.db, base.id);
  }

  private readonly structureListeners: StructureChangeListener[] = [];
  private readonly commitListeners: Array<(base: BaseRef) => void> = [];
  private readonly eventsHooks: EventsHook[] = [];

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

  async write<T>(base: BaseRef, actor: Actor, work: (scope: WriteScope) => Promise<T>): Promise<T> {
    let emitted = 0;
    let structureChanged = false;
    const result = await this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const meta = await lockMetadata(trx, this.dialect, base.id);
      let changed = false;
      let structural = false;
      const events: NewChangeEvent[] = [];
      const value = await work({
        trx,
        dialect: this.dialect,
        base,
        actor,
        now,
        meta,
        metadataChanged: (kind = 'structure') => {
          changed = true;
          if (kind === 'structure') structural = true;
        },
        emit: (more) => {
          for (const e of more) events.push(e);
        },
      });
      if (events.length > 0) for (const hook of this.eventsHooks) await hook(trx, events, now);
      await saveRevision(trx, base.id, changed ? meta : null);
      await appendEvents(trx, this.dialect, events, now);
      emitted = events.length;
      structureChanged = structural;
      return value;
    });
    for (const listener of this.commitListeners) listener(base);
    if (emitted > 0) this.onEvents();
    // The write is committed: a listener's failure is its own (it logs), never the caller's.
    if (structureChanged) for (const listener of this.structureListeners) await listener(base).catch(() => undefined);
    return result;
  }
}
