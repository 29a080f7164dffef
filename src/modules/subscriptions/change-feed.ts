import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, apiError, badRequest } from '../../shared/errors.js';
import { eventHorizon, eventsOfBaseAfter, pruneEvents, structureEventsAfter, type ChangeEvent, type StructureEvent } from '../events/index.js';
import { columnsBeyond, loadMetadata, refuseBeyondScope } from '../rows/index.js';
import { changeData } from './change-data.js';
import type { CommitSignal } from './commit-signal.js';
import { formatCursor, parseCursor, type Cursor } from './cursor.js';
import { compileSubscription, matchChange, parseSubscription, SUBSCRIPTION_FIELDS, type CompiledSubscription } from './subscription.js';

export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 1000;
/** Longest long poll (`wait`); a reader simply asks again. */
export const FEED_MAX_WAIT_S = 60;
/** While waiting, the feed also looks again this often (a commit signal lost between instances). */
const RECHECK_MS = 1_000;
/** `event_consumers` rows recording the highest row / structure event the retention prune deleted. */
export const PRUNED_EVENTS = 'change-feed:pruned';

export interface ChangeFeedDeps {
  db: Db;
  clock: Clock;
  timeZone: string;
  /** CHANGE_FEED_RETENTION_DAYS. */
  retentionDays: number;
  signal: CommitSignal;
  /** The outbox consumers: an event is pruned only once every one of them has passed it. */
  consumerNames: () => string[];
}

export type FeedQuery = Record<string, string | undefined>;

export interface FeedPage {
  changes: Array<Record<string, unknown>>;
  cursor: string;
  has_more: boolean;
}

/** What a reader asked for: its subscription, and whether structure changes are included. */
interface FeedFilter {
  sub: CompiledSubscription;
  structure: boolean;
  /** A table-scoped token's tables: cells of columns showing other tables are left out (rows/scope-columns.ts). */
  scopeTables?: readonly string[];
}

/**
 * The change feed: a base's committed changes in commit order after a cursor, filtered like a
 * webhook. Reads the outbox (`events`, `structure_events`), which keeps changes for
 * CHANGE_FEED_RETENTION_DAYS; an older cursor gets 410 with the oldest one still served.
 */
export class ChangeFeed {
  private closed = false;

  constructor(private readonly deps: ChangeFeedDeps) {}

  /** Shutdown: waiting readers answer with what they have. */
  close(): void {
    this.closed = true;
    this.deps.signal.wakeAll();
  }

  /** Checks the query (400 on anything malformed) and returns what `read` needs. */
  /** `scopeTables`: a table-scoped token's tables (names or ids): the feed is limited to them. */
  async prepare(baseId: number, query: FeedQuery, scopeTables?: readonly string[]): Promise<{ filter: FeedFilter; limit: number; waitMs: number; cursor: Cursor }> {
    const limit = intParam(query.limit, 'limit', 1, FEED_MAX_LIMIT, FEED_DEFAULT_LIMIT);
    const waitMs = intParam(query.wait, 'wait', 0, FEED_MAX_WAIT_S, 0) * 1000;
    const filter = await this.filterOf(baseId, scopeTables ? await this.withinScope(baseId, query, scopeTables) : query);
    if (scopeTables) {
      filter.scopeTables = scopeTables;
      await this.refuseColumnsBeyond(baseId, filter.sub, scopeTables);
    }
    const cursor = await this.start(baseId, query.after);
    return { filter, limit, waitMs, cursor };
  }

  /**
   * One page after `cursor`; with `waitMs`, waits (bounded, real time) for a first matching change,
   * woken by commits to the base.
   */
  async read(baseId: number, filter: FeedFilter, cursor: Cursor, limit: number, waitMs = 0, abort?: AbortSignal): Promise<FeedPage & { next: Cursor }> {
    const deadline = performance.now() + waitMs;
    for (;;) {
      await this.assertKept(baseId, cursor);
      const page = await this.page(baseId, filter, cursor, limit);
      cursor = page.next;
      const left = deadline - performance.now();
      if (page.changes.length > 0 || left <= 0 || abort?.aborted || this.closed) return page;
      if (!page.has_more) await this.deps.signal.wait(baseId, Math.min(left, RECHECK_MS), abort);
    }
  }

  /** 410 with the oldest cursor served when changes after `cursor` were pruned. */
  async assertKept(baseId: number, cursor: Cursor): Promise<void> {
    const pruned = await prunedThrough(this.deps.db);
    if (cursor.event < pruned) {
      throw new AppError(410, {
        error_msg: `The changes after this cursor are no longer kept (CHANGE_FEED_RETENTION_DAYS=${this.deps.retentionDays}); continue from oldest_cursor.`,
        oldest_cursor: formatCursor(await this.positionAt(baseId, pruned)),
      });
    }
  }

  /**
   * Delete row events older than the retention that every outbox consumer has passed, and remember
   * the highest one deleted (a cursor before it gets 410).
   */
  async prune(now: number): Promise<number> {
    const before = now - this.deps.retentionDays * 86_400_000;
    const db = this.deps.db;
    const last = await db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).where('created_at', '<', before).executeTakeFirst();
    // Never past the event horizon: an older event may still be in flight (concurrent appends).
    const through = Math.min(Number(last?.id ?? 0), await eventHorizon(db));
    if (through === 0) return 0;
    const deleted = await pruneEvents(db, this.deps.consumerNames(), Math.min(before, now));
    const kept = await db.selectFrom('events').select((eb) => eb.fn.min('id').as('id')).executeTakeFirst();
    // Everything below the oldest kept event is gone (or never was); never move the mark back.
    const mark = kept?.id === null || kept?.id === undefined ? through : Math.min(through, Number(kept.id) - 1);
    if (deleted > 0) await recordPruned(db, mark, now);
    return deleted;
  }

  /**
   * One consistent page. The outbox head is read first: every row event up to it has committed, and
   * so has every structure change placed at or before it; both reads stop there. A reader that got
   * everything up to the head continues from the head, so an idle base's cursor keeps up with the
   * outbox (and is not taken for stale when other bases' old changes are pruned).
   */
  private async page(baseId: number, filter: FeedFilter, from: Cursor, limit: number): Promise<FeedPage & { next: Cursor }> {
    const db = this.deps.db;
    const head = await eventHorizon(db);
    const rawStructure = filter.structure ? await structureEventsAfter(db, from.structure, limit, baseId) : [];
    const structure = rawStructure.filter((change) => change.afterEventId <= head);
    const structureCut = rawStructure.length === limit;
    // More structure changes than one page: rows only up to the last one read (the rest may precede later rows).
    const rowBound = structureCut && structure.length > 0 ? structure[structure.length - 1]!.afterEventId : head;
    const rawRows = await eventsOfBaseAfter(db, baseId, from.event, limit);
    const rows = rawRows.filter((event) => event.id <= rowBound);
    const rowsCut = rawRows.length === limit && rows.length === rawRows.length;
    const items = merge(rows, structure, rowsCut, limit);
    const hidden = filter.scopeTables ? await this.columnsBeyondOf(baseId, filter.scopeTables) : undefined;
    const next = { ...from };
    const changes: Array<Record<string, unknown>> = [];
    for (const item of items) {
      if (item.kind === 'row') next.event = item.event.id;
      else next.structure = item.change.id;
      if (item.kind === 'row' && !matchChange(filter.sub, item.event, this.deps.timeZone).match) continue;
      const event = item.kind === 'row' && hidden ? withoutHiddenCells(item.event, hidden(item.event.tableId)) : item.kind === 'row' ? item.event : null;
      if (item.kind === 'row' && event === null) continue;
      const cursor = formatCursor(next);
      changes.push(event ? rowChange(event, cursor) : structureChange((item as { change: StructureEvent }).change, cursor));
    }
    const complete = !rowsCut && !structureCut && items.length === rows.length + structure.length;
    if (complete) next.event = Math.max(next.event, rowBound);
    return { changes, cursor: formatCursor(next), has_more: !complete, next };
  }

  private async start(baseId: number, after: string | undefined): Promise<Cursor> {
    if (after === undefined || after === '') return this.positionAt(baseId, await prunedThrough(this.deps.db));
    if (after === 'now') {
      const db = this.deps.db;
      const event = await eventHorizon(db);
      const structure = await db.selectFrom('structure_events').select((eb) => eb.fn.max('id').as('id')).where('base_id', '=', baseId).executeTakeFirst();
      return { event, structure: Number(structure?.id ?? 0) };
    }
    const cursor = parseCursor(after);
    if (!cursor) throw badRequest('after must be a cursor from this feed (or "now")');
    return cursor;
  }

  /** The cursor right after row event `event`: structure changes placed before it count as passed. */
  private async positionAt(baseId: number, event: number): Promise<Cursor> {
    const row = await this.deps.db
      .selectFrom('structure_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('base_id', '=', baseId)
      .where('after_event_id', '<', event)
      .executeTakeFirst();
    return { event, structure: Number(row?.id ?? 0) };
  }

  /**
   * A table-scoped token's query: the tables it names must be in the scope (403 naming the first that
   * is not); naming none asks for the scope's tables (those that still exist), not for every table.
   */
  private async withinScope(baseId: number, query: FeedQuery, scopeTables: readonly string[]): Promise<FeedQuery> {
    const { tables } = await loadMetadata(this.deps.db, baseId);
    const inScope = (t: { _id: string; name: string }) => scopeTables.includes(t._id) || scopeTables.includes(t.name);
    if (query.tables === undefined || query.tables === '') {
      const kept = tables.filter(inScope).map((t) => t._id);
      if (kept.length === 0) throw apiError(403, "The token's scope names no table of this base.");
      return { ...query, tables: JSON.stringify(kept) };
    }
    const named = parseSubscription({ tables: query.tables }, tables)?.tables ?? [];
    for (const id of named) {
      const table = tables.find((t) => t._id === id)!;
      if (!inScope(table)) throw apiError(403, `The token's scope lacks the table ${table.name}.`);
    }
    return query;
  }

  /** Per table, the columns a table-scoped token may not read (link columns to other tables and the formulas over them). */
  private async columnsBeyondOf(baseId: number, scopeTables: readonly string[]): Promise<(tableId: string) => ReadonlyMap<string, string>> {
    const { tables } = await loadMetadata(this.deps.db, baseId);
    const known = new Map<string, ReadonlyMap<string, string>>();
    return (tableId) => {
      let beyond = known.get(tableId);
      if (!beyond) {
        const table = tables.find((t) => t._id === tableId);
        beyond = table ? columnsBeyond(scopeTables, tables, table) : new Map<string, string>();
        known.set(tableId, beyond);
      }
      return beyond;
    };
  }

  /** A table-scoped token may not subscribe to (or filter on) a column showing a table outside its scope: 403 naming it. */
  private async refuseColumnsBeyond(baseId: number, sub: CompiledSubscription, scopeTables: readonly string[]): Promise<void> {
    const spec = sub.spec;
    if (!spec) return;
    const beyond = await this.columnsBeyondOf(baseId, scopeTables);
    for (const [tableId, keys] of Object.entries(spec.columns ?? {})) refuseBeyondScope(beyond(tableId), keys);
    if (spec.tables?.length === 1) refuseBeyondScope(beyond(spec.tables[0]!), spec.filter_columns.map((c) => c.key));
  }

  private async filterOf(baseId: number, query: FeedQuery): Promise<FeedFilter> {
    const given: Record<string, unknown> = {};
    for (const field of SUBSCRIPTION_FIELDS) if (query[field] !== undefined) given[field] = query[field];
    // `structure` among the events asks for structure changes too (they carry no row to filter).
    const events = typeof given.events === 'string' ? given.events.split(',').map((s) => s.trim()).filter((s) => s !== '') : null;
    const structure = events === null ? given.tables === undefined && given.columns === undefined && given.filters === undefined : events.includes('structure');
    if (events !== null) given.events = events.filter((e) => e !== 'structure').join(',') || (structure ? 'insert_row,modify_row,delete_row,add_link,remove_link' : '');
    if (Object.keys(given).length === 0) return { sub: compileSubscription(null), structure };
    const meta = await loadMetadata(this.deps.db, baseId);
    return { sub: compileSubscription(parseSubscription(given, meta.tables)), structure };
  }
}

type Item = { kind: 'row'; event: ChangeEvent } | { kind: 'structure'; change: StructureEvent };

/**
 * Row and structure events in commit order: a structure change goes right after the row event it
 * names. When the row page was cut at `limit`, structure changes after its last row wait for the next page.
 */
function merge(rows: ChangeEvent[], structure: StructureEvent[], rowsCut: boolean, limit: number): Item[] {
  const lastRow = rows.length > 0 ? rows[rows.length - 1]!.id : Number.POSITIVE_INFINITY;
  const out: Item[] = [];
  let s = 0;
  for (const event of rows) {
    while (s < structure.length && structure[s]!.afterEventId < event.id) out.push({ kind: 'structure', change: structure[s++]! });
    out.push({ kind: 'row', event });
  }
  while (s < structure.length && (!rowsCut || structure[s]!.afterEventId <= lastRow)) out.push({ kind: 'structure', change: structure[s++]! });
  return out.slice(0, limit);
}

/**
 * A row event without the cells of `hidden` columns; null when nothing is left of a link change (it
 * names rows of a table outside the token's scope).
 */
function withoutHiddenCells(event: ChangeEvent, hidden: ReadonlyMap<string, string>): ChangeEvent | null {
  if (hidden.size === 0) return event;
  const rowData = event.rowData.filter((item) => !hidden.has(item.column_key));
  if (rowData.length === event.rowData.length) return event;
  if (rowData.length === 0 && (event.opType === 'add_link' || event.opType === 'remove_link' || event.opType === 'modify_row')) return null;
  return { ...event, rowData };
}

function rowChange(event: ChangeEvent, cursor: string): Record<string, unknown> {
  return { cursor, type: 'row', event_id: event.id, ...changeData(event) };
}

function structureChange(change: StructureEvent, cursor: string): Record<string, unknown> {
  return {
    cursor,
    type: 'structure',
    dtable_uuid: change.baseUuid,
    op_type: change.op.op_type,
    op: change.op,
    op_user: change.opUser,
    op_app: change.opApp,
    op_time: change.opTime / 1000,
  };
}

function intParam(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) throw badRequest(`${name} must be an integer from ${min} to ${max}`);
  return Number(value);
}

async function prunedThrough(db: Executor): Promise<number> {
  const row = await db.selectFrom('event_consumers').select('last_event_id').where('name', '=', PRUNED_EVENTS).executeTakeFirst();
  return Number(row?.last_event_id ?? 0);
}

async function recordPruned(db: Executor, through: number, now: number): Promise<void> {
  const current = await prunedThrough(db);
  if (through <= current) return;
  await db
    .insertInto('event_consumers')
    .values({ name: PRUNED_EVENTS, last_event_id: through, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ last_event_id: through, updated_at: now }))
    .execute();
}
