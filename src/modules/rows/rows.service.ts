import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db, Executor } from '../../db/index.js';
import { badRequest, notFound } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { compileFilter, filterWhere } from './filter-adapter.js';
import { indexableTerms, searchTerms, type FilterContext } from '../filters/index.js';
import { newRowId } from './ids.js';
import { computeFormulas } from './formula-columns.js';
import { loadLinkCells, loadLinkJson } from './link-cells.js';
import { byKeysPresenter, listingPresenter, rowJson, RowFragments } from './row-fragments.js';
import { SerializedJson, SPLICE, spliceJson } from './serialized-json.js';
import { ReadMetadata } from './read-metadata.js';
import { sizeLimits, tooLargeToRead } from './size-limits.js';
import { changedCellKeys, dependentRows, propagateLinkFormulas, recomputeLinkFormulas } from './link-formula-columns.js';
import { removeLinksOfRows } from './links.repository.js';
import { linksOfRows, restoreLinks, setRowLinks } from './kept-links.js';
import { changeLinksIn } from './links.service.js';
import { findTable, lookupColumn, optionalView, visibleColumns, type BaseMetadata, type TableMeta, type ViewMeta } from './metadata.js';
import { columnsBeyond, refuseBeyondScope, withinScope } from './scope-columns.js';
import { dateColumnKeys, presentRow, presentRowByKeys, type StoredRow } from './present.js';
import { deleteEvent, insertEvents, modifyEvent, sameCells } from './row-events.js';
import { RowInput } from './row-input.js';
import { lockRowsIn, refuseLockedRows } from './row-locks.js';
import { notArchived } from './archived-rows.js';
import * as repo from './rows.repository.js';
import { keysetRanges, orderTerms, sortKeys } from './sort-sql.js';
import { explainSortedBackward, listSortedBackward, type BackwardSortRead } from './backward-sort-read.js';
import type { BlockStart } from './position-blocks.js';
import { indexUses, JUMP_MANY_MAX, type JumpManyListing, type JumpSetListing, type JumpUse, type RowIndexes } from './row-indexes.js';
import { explainJumpAnchor, jumpAnchor, type JumpSet } from './jump-sets.js';
import { ListingPositions, type PageEnd } from './listing-positions.js';
import { decodeCursor, encodeCursor, listingIdentity } from './listing-cursor.js';
import { presentSettings } from './structure.present.js';
import { wallClockAt } from '../../shared/dates/index.js';
import { discardHeldUpdates, heldUpdatePages, holdUpdates, undoHeldWrites } from './held-writes.js';
import { publishStaged, stagingTableId } from './staging.js';
import { limitedView, refuseHiddenColumns, refuseRowsOutsideView, type ViewLimit } from './view-limit.js';
import { threadReader, type ThreadReadOptions } from './thread-reads.js';
import { TableSizes } from './table-sizes.js';

/** One batch of a multi-batch write: its events held under `id`, its new rows staged under `stage` (staging.ts). */
export interface StagedHold {
  id: string;
  stage: string;
  /**
   * New tables the write fills (`TablesService.stage`): in no metadata, so no reader, listing, live
   * client or webhook knows them, until `publishHold` adds them together with their rows. The write's
   * appends name them by `table_id`.
   */
  newTables?: readonly TableMeta[];
  /**
   * Tables `publishHold` deletes as the new ones arrive (a new base's blank tables), as they were when
   * the write began (`TablesService.asTheyAre`): one whose structure or rows changed meanwhile (someone
   * worked in it) is kept instead.
   */
  replaces?: readonly ReplacedTable[];
}

/** A table as it was: its metadata and a fingerprint of its rows (`rowsFingerprint`). */
export interface ReplacedTable {
  table: TableMeta;
  rows: string;
}

/** What undoing a hold needs: its events, its stage, and the unpublished tables its rows went into. */
export interface UndoableHold {
  id: string;
  stage: string;
  /** Tables of the write in no metadata (StagedHold `newTables`): the rows under their ids are deleted. */
  newTableIds?: readonly string[];
}
import { structureRestore } from './structure-restore.js';
import { removeTableIn } from './tables.service.js';
import type { ColumnMeta } from './metadata.js';

/** Appends of at most this many rows try the one-statement write (PostgreSQL): round trips are most of a small write's time, not of a large one's. */
const ONE_STATEMENT_MAX_ROWS = 100;

/** Rows per call (contract §9 / OA limits); above them the call is refused whole. */
export const ROW_LIMITS = { list: 1000, append: 1000, update: 1000, delete: 10000 } as const;

export interface ListInput {
  table_name?: string;
  table_id?: string;
  view_name?: string;
  view_id?: string;
  start?: number;
  limit?: number;
  convert_keys?: unknown;
  order_by?: string;
  direction?: string;
  /** Resume after the row a page's `next_cursor` names (listing-cursor.ts); not with `start`. */
  cursor?: string;
  /** A table-scoped token's tables: link columns to other tables (and formulas over them) are left out (scope-columns.ts). */
  scopeTables?: readonly string[];
  /** A view share's token: its view's own filters and sorts apply even on columns beyond `scopeTables`. */
  sharedView?: boolean;
}

export interface Viewer {
  /** The user's virtual id for `include_me` / `is_current_user_ID` filters (none for API-Tokens). */
  currentUser?: string;
}

type Body = Record<string, unknown>;

/** `convert_keys` as clients send it: true/True/1 → names, false/False/0 → keys. */
export function parseConvertKeys(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw badRequest('convert_keys invalid.');
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type UpdateItem = { row_id: string; row: Body };

/** A row id as this server and the original's clients make them. */
const ROW_ID = /^[A-Za-z0-9_-]{22}$/;

/** Row writes inside one `writeMany` transaction; `trx` lets the caller read within it. */
export interface ScopedRowWriter {
  trx: WriteScope['trx'];
  append(body: Body): Promise<{ inserted_row_count: number }>;
  update(body: Body): Promise<number>;
  remove(body: Body): Promise<number>;
  /** Locks (true) or unlocks the rows `row_ids` of the table named in the body. */
  lock(body: Body, locked: boolean): Promise<void>;
  /** Adds links (the body of `POST …/links/`: `link_id`, `table_id`, `other_table_id`, `other_rows_ids_map`). */
  link(body: Body): Promise<void>;
}

/** A stored row put back by a restore: its id, its stored cells and, optionally, its links by column key. */
export interface RestoredRow {
  rowId: string;
  data: Record<string, unknown>;
  links?: Record<string, string[]>;
  /** The row's original creator and creation time (kept by the delete); else the restorer and now. */
  creator?: string;
  ctime?: number;
}

/**
 * Row writes of a restore (the history module) inside one write: values are stored ones, set as they
 * are (no coercion), with the same formulas, events, webhooks and rules as any write.
 */
export interface RestoreScope {
  trx: WriteScope['trx'];
  meta: BaseMetadata;
  /** Current stored rows of a table by id (missing ids are absent). */
  find(tableId: string, rowIds: string[]): Promise<Map<string, StoredRow>>;
  remove(tableId: string, rowIds: string[]): Promise<number>;
  /** Set these cells (column key → stored value; null clears) on existing rows. */
  setCells(tableId: string, changes: Array<{ rowId: string; data: Record<string, unknown> }>): Promise<number>;
  /** Insert deleted rows again under their ids, with the links whose other rows still exist. */
  reinsert(tableId: string, rows: RestoredRow[]): Promise<number>;
  /** Set one row's link cell to these linked row ids (those still there). */
  setLinks(tableId: string, rowId: string, columnKey: string, ids: string[]): Promise<boolean>;
  /** Tables and columns set back (structure operations, the table trash); a name or id taken meanwhile → 409. */
  structure: StructureRestore;
}

/** Link columns another table lost with a deleted table: put back after the column they followed. */
export interface LostLinkColumn {
  tableId: string;
  column: ColumnMeta;
  after: string;
}

export interface StructureRestore {
  /** Puts a deleted table back (its link columns to tables that are gone are left out); returns it as restored. */
  addTable(table: TableMeta, linkColumns: LostLinkColumn[]): TableMeta;
  /**
   * Puts a trashed table whose rows and links were kept in place back (as `addTable`): its rows appear
   * again as they were, with insert events; formulas and link formulas are computed again.
   */
  revealTable(table: TableMeta, linkColumns: LostLinkColumn[]): Promise<TableMeta>;
  /** Deletes a table (it goes to the trash as any deleted table). */
  removeTable(tableId: string): Promise<void>;
  renameTable(tableId: string, name: string): void;
  /** Puts a deleted non-link column back after `afterKey` (its cells were dropped with it: they stay empty). */
  addColumn(tableId: string, column: ColumnMeta, afterKey: string): Promise<void>;
  removeColumn(tableId: string, columnKey: string): Promise<void>;
  renameColumn(tableId: string, columnKey: string, name: string): void;
}

function appendInput(body: Body): Body[] {
  const rows = Array.isArray(body.rows) ? body.rows : isObject(body.row) ? [body.row] : null;
  if (!rows || !rows.every(isObject)) throw badRequest('rows invalid.');
  if (rows.length === 0) throw badRequest('rows invalid: the list is empty.');
  return rows;
}

function updateInput(body: Body): UpdateItem[] {
  const updates = Array.isArray(body.updates) ? body.updates : typeof body.row_id === 'string' ? [{ row_id: body.row_id, row: body.row }] : null;
  if (!updates) throw badRequest('updates invalid.');
  updates.forEach((u, i) => {
    if (!isObject(u) || typeof u.row_id !== 'string' || !isObject(u.row)) throw badRequest(`updates.${i} invalid.`);
  });
  return updates as UpdateItem[];
}

function removeInput(body: Body): string[] {
  const ids = Array.isArray(body.row_ids) ? body.row_ids : typeof body.row_id === 'string' ? [body.row_id] : null;
  if (!ids || !ids.every((id) => typeof id === 'string')) throw badRequest('row_ids invalid.');
  return ids as string[];
}

export class RowsService {
  constructor(
    private readonly db: Db,
    private readonly writer: BaseWriter,
    /** Presented rows kept under their row texts (listings and the whole-base read). */
    readonly fragments: RowFragments = new RowFragments(),
    /** Builds indexes for the columns big tables are filtered and sorted on (row-indexes.ts). */
    readonly indexes?: RowIndexes,
  ) {
    this.readMeta = new ReadMetadata(db, (base) => writer.read(base));
    this.sizes = new TableSizes(db, () => writer.now());
  }

  /** SQLite: listing reads of big tables that may scan run on reader threads (thread-reads.ts); unset: all here. */
  threadReads?: ThreadReadOptions;

  /** Listing statements run on a reader thread (thread-reads.ts; tests, /metrics). */
  threadReadCount = 0;

  private readonly sizes: TableSizes;

  /**
   * Where a listing's page is read: on a reader thread when the read `mayScan` (no index bounds the rows it
   * looks at), the database is a SQLite file, and the table has at least `threadReads.minRows` rows;
   * else here, where a short read costs less than the hop to a thread.
   */
  private async readerFor(baseId: number, tableId: string, mayScan: boolean): Promise<Executor> {
    const options = this.threadReads;
    if (!mayScan || !options || this.writer.dialect !== 'sqlite') return this.db;
    if (!(await options.threads.readsFile()) || !(await this.sizes.atLeast(baseId, tableId, options.minRows))) return this.db;
    return threadReader(options, baseId, () => this.threadReadCount++);
  }

  /** The metadata as reads see it (parsed once per version, frozen). */
  private readonly readMeta: ReadMetadata;

  /** The parsed metadata kept for reads (read-metadata.ts), for /metrics. */
  get metadataStats(): { bases: number; bytes: number } {
    return this.readMeta.stats;
  }

  private filterContext(viewer: Viewer): FilterContext {
    return { now: this.writer.now(), timeZone: this.writer.timeZone, currentUser: viewer.currentUser };
  }

  private todayAt = Number.NaN;
  private todayKey = '';

  /** Today in TIME_ZONE (what relative date filters read), recomputed at most once a second. */
  today(): string {
    const now = this.writer.now();
    if (Math.floor(now / 1000) !== Math.floor(this.todayAt / 1000)) {
      const w = wallClockAt(now, this.writer.timeZone);
      this.todayKey = `${w.year}-${w.month}-${w.day}`;
      this.todayAt = now;
    }
    return this.todayKey;
  }

  /** One page of rows, presented (`{"rows": [...]}` is `listJson`'s text; this is its parsed form). */
  async list(base: BaseRef, input: ListInput, viewer: Viewer, extraFilter?: Body): Promise<Record<string, unknown>[]> {
    return (JSON.parse(await this.listJson(base, input, viewer, extraFilter)) as { rows: Record<string, unknown>[] }).rows;
  }

  /**
   * The `rows/` and `filtered-rows/` answer as JSON text: the page's rows read as row texts, presented
   * from the fragments kept under them (row-fragments.ts), link cells spliced in.
   */
  async listJson(base: BaseRef, input: ListInput, viewer: Viewer, extraFilter?: Body, revision?: number): Promise<string> {
    const q = await this.listing(base, input, viewer, extraFilter);
    const start = input.start ?? 0;
    const limit = input.limit ?? ROW_LIMITS.list;
    if (start < 0) throw badRequest('start invalid.');
    if (limit < 1) throw badRequest('limit invalid.');
    if (limit > ROW_LIMITS.list) throw badRequest(`Number of rows to list exceeds ${ROW_LIMITS.list}.`);
    if (input.cursor !== undefined && start > 0) throw badRequest('cursor cannot be combined with start.');
    const identity = listingIdentity({ tableId: q.table._id, viewId: q.viewId, filter: extraFilter ?? null, sort: q.sortIdentity });
    const after = input.cursor === undefined ? undefined : await this.cursorPosition(base, q, identity, input.cursor);
    // How to read the table (a probe of the filter's indexes), asked only when a page is not found without it.
    const hint = async () => (await this.indexes?.hintTerm(base.id, q.table._id, q.terms, q.firstSort)) ?? {};
    const key = JSON.stringify([q.table._id, input.view_id ?? input.view_name ?? null, extraFilter ?? null, viewer.currentUser ?? null, this.today(), q.sortKey]);
    // One row more than the page: whether a next page exists (its cursor is answered only then).
    const read = limit + 1;
    let rows: Array<{ id: number; r: string; values?: unknown[] }>;
    if (q.query.orderBy.length > 0) {
      // Sorted: after the cursor's row, or after the nearest page end known at this revision, by its sort values (keyset).
      const known: PageEnd & { position: number } = after
        ? { position: 0, afterId: after.id, values: after.values }
        : revision === undefined
          ? { position: 0, afterId: 0 }
          : this.positions.nearest(key, base.id, revision, start);
      const knownKeyed = after !== undefined || (known.position > 0 && known.values !== undefined);
      // …or after the row before `start` found through the listing's jump set (PostgreSQL).
      const jumped = after ? undefined : await this.jumpSetStart(base.id, q, start, knownKeyed ? start - known.position : start);
      if (jumped === null) return this.pageJson(base, q, []);
      const from = jumped ?? known;
      const keyed = after !== undefined || (from.position > 0 && from.values !== undefined);
      const jumpIndex = this.jumpIndex(base.id, q, keyed ? start - from.position : start);
      const hinted = jumpIndex ? { index: jumpIndex } : await hint();
      const index = hinted.index;
      const skip = keyed ? start - from.position : start;
      const backward = index ? undefined : this.backwardRead(base.id, q, skip);
      if (backward) this.backwardPages++;
      // Bounded: a filter narrowed by its index, or an unfiltered page read off the sort's index (forwards or backwards).
      const reader = await this.readerFor(base.id, q.table._id, !hinted.narrowing && !backward && (q.filtered || !index));
      // A sort read with no index reads every match: through the trigram index, only the rows holding the terms
      // (a listing with a search term is filtered, so it is never read backwards).
      const search = index ? undefined : await this.searchRead(base.id, q, 'all', reader);
      const where = search ? andAll([...(q.query.where ? [q.query.where] : []), repo.searchCondition(this.writer.dialect, search)]) : q.query.where;
      const sorted = { ...q.query, where, keys: q.sortKeys.map((k) => k.value), limit: read, ...(index ? { indexedBy: index } : {}) };
      rows = backward
        ? await listSortedBackward(this.db, this.writer.dialect, {
            ...backward,
            ...(keyed ? { after: { value: from.values![0], id: from.afterId } } : {}),
            skip,
            limit: read,
          })
        : keyed
        ? await repo.listSortedRowTextsInRanges(reader, this.writer.dialect, {
            ...sorted,
            ranges: keysetRanges(q.sortKeys, { values: from.values!, id: from.afterId }, this.writer.dialect),
            offset: start - from.position,
          })
        : await repo.listSortedRowTexts(reader, this.writer.dialect, { ...sorted, offset: start });
    } else {
      // Unsorted (id order): after the cursor's row, or from the nearest page end known at this revision
      // (listing-positions.ts), the rows between counted through the table's position index when it has one.
      const known = after ? { position: 0, afterId: after.id } : revision === undefined ? { position: 0, afterId: 0 } : this.positions.nearest(key, base.id, revision, start);
      const jumped = after || !q.filtered ? undefined : await this.jumpSetStart(base.id, q, start, start - known.position);
      if (jumped === null) return this.pageJson(base, q, []);
      const from = jumped ?? known;
      const skip = start - from.position;
      const positions = q.filtered ? undefined : this.positionJump(base.id, q.table._id, skip);
      // A filter matching many rows fills its page within a short walk in id order: tried before its index is probed.
      const walked = await this.walkFirst(base.id, q, from.afterId, skip, read);
      if (walked && walked.length >= skip + read) rows = walked.slice(skip);
      else {
        const jumpIndex = this.jumpIndex(base.id, q, skip);
        const hinted = jumpIndex ? { index: jumpIndex } : ((await this.indexes?.hintTerm(base.id, q.table._id, q.terms, q.firstSort)) ?? {});
        const index = hinted.index;
        // Past whole counted blocks first (position-blocks.ts): only the rest is counted in the position index.
        const blocked = positions ? await this.blockStart(base.id, q.table._id, positions, from.afterId, skip) : undefined;
        if (blocked === null) return this.pageJson(base, q, []);
        // Bounded: a filter narrowed by its index, a short skip into an unfiltered listing, or a deep one past counted blocks.
        const reader = await this.readerFor(base.id, q.table._id, !hinted.narrowing && (q.filtered || (skip >= (this.indexes?.options.positionSkip ?? 0) && !blocked)));
        // Bound for a thread: its next ids are read here first, where a filter matching many rows fills its page without the hop.
        const near = reader !== this.db && !walked && !index && !positions ? await this.nearFirst(q.query, from.afterId, skip + read) : undefined;
        if (near && near.rows.length >= skip + read) rows = near.rows.slice(skip);
        else {
          // After a walk or a near read that did not fill the page: the rest from its end (the rows it passed match no more through an index).
          const before = near?.rows ?? walked;
          // No filter index narrows the rest: the trigram index of a `contains` term does.
          const searched = index ? undefined : await this.searchRead(base.id, q, 'page', reader);
          const found = before?.length ?? 0;
          const rest = await repo.listRowTextsAfter(reader, this.writer.dialect, {
            ...q.query,
            afterId: near?.end ?? blocked?.afterId ?? walked?.[found - 1]?.id ?? from.afterId,
            offset: blocked?.offset ?? Math.max(0, skip - found),
            limit: read - Math.max(0, found - skip),
            ...(index ? { indexedBy: index } : {}),
            ...(hinted.narrowing ? { narrowing: hinted.narrowing } : {}),
            ...(positions ? { positions } : {}),
            ...(searched ? { search: searched } : {}),
          });
          rows = before ? [...before.slice(skip), ...rest] : rest;
        }
      }
    }
    const more = rows.length > limit;
    if (more) rows = rows.slice(0, limit);
    const last = rows[rows.length - 1];
    // A cursor's page has no known position (rows before it may have come and gone); a start's has.
    if (last && !after && revision !== undefined) this.positions.learn(key, base.id, revision, start + rows.length, last.id, last.values);
    const next = more && last ? encodeCursor(base.id, identity, { id: last.id, values: last.values ?? [] }) : undefined;
    return this.pageJson(base, q, rows.map((r) => r.r), next);
  }

  /**
   * The first `skip + read` rows of an unsorted filtered listing after `afterId`, found within the next
   * `walkWindow` rows in id order (RowIndexes.walkWindow), when its filter has an index `hint` would
   * probe; fewer when the window holds fewer. Undefined when not tried: no such index, a deep skip (jump
   * indexes and sets serve those), the walk off, or the last listing filtered on the same columns found
   * its page through an index (RowIndexes.shouldWalk). A filter matching 1% of 1,000,000 rows filled its page
   * in a walk of about 10,000 rows (7–10 ms on PostgreSQL) where the probe alone read 2,000 rows through
   * the index at random (15–35 ms) before the same walk.
   */
  private async walkFirst(baseId: number, q: Awaited<ReturnType<RowsService['listing']>>, afterId: number, skip: number, read: number) {
    const indexes = this.indexes;
    if (!indexes || !q.filtered || !q.query.where || skip >= indexes.options.positionSkip || !indexes.shouldWalk(baseId, q.table._id, q.terms)) return undefined;
    this.walkedPages++;
    const rows = await repo.listRowTextsInWindow(this.db, this.writer.dialect, { baseId, tableId: q.table._id, afterId, where: q.query.where, limit: skip + read, window: indexes.options.walkWindow });
    // A walk that did not fill the page: the next listing filtered so probes first (the probe notes what it finds).
    if (rows.length < skip + read) indexes.noteWalk(baseId, q.table._id, q.terms, false);
    return rows;
  }

  /**
   * The first `limit` rows of an unsorted listing after `afterId` among the next `threadReads.nearIds` ids,
   * read here, and the last id that covers (SQLite; before a read on a thread): the page of a filter matching
   * many rows is found within them (1% of 10,000,000 rows: about 10,000), a rare one costs this bounded look
   * and then the thread.
   */
  private async nearFirst(query: Omit<repo.ListQuery, 'orderBy' | 'offset' | 'limit'>, afterId: number, limit: number): Promise<{ rows: Array<{ id: number; r: string }>; end: number }> {
    // Counted from the table's next row: ids are the database's, and other tables' rows may come before it.
    const next = await repo.nextRowId(this.db, query.baseId, query.tableId, afterId);
    const end = (next ?? afterId) - 1 + (this.threadReads?.nearIds ?? 0);
    const within = sql<SqlBool>`base_rows.id <= ${end}`;
    const rows = await repo.listRowTextsAfter(this.db, this.writer.dialect, { baseId: query.baseId, tableId: query.tableId, where: query.where ? sql<SqlBool>`(${query.where}) and ${within}` : within, afterId, limit });
    return { rows, end };
  }

  /** Unsorted filtered pages that walked a window first (walkFirst; tests). */
  walkedPages = 0;

  /**
   * A page of an unfiltered listing sorted on one column whose own row index is missing but whose other
   * direction's exists: read from that index backwards (backward-sort-read.ts) instead of sorting the
   * table, for skips up to `reverseSkip` rows (each statement reads at most skip + page rows).
   */
  private backwardRead(baseId: number, q: Awaited<ReturnType<RowsService['listing']>>, skip: number): Omit<BackwardSortRead, 'skip' | 'limit' | 'after'> | undefined {
    const sort = q.onlySort;
    if (!this.indexes || !sort || q.filtered || skip > this.indexes.options.reverseSkip) return undefined;
    const other = this.indexes.reverseIndex(baseId, q.table._id, sort.column, sort.desc);
    if (!other) return undefined;
    const indexedBy = this.writer.dialect === 'postgres' ? repo.ORDERED_SCAN : other;
    return { baseId, tableId: q.table._id, where: q.query.where, value: q.sortKeys[0]!.value, desc: sort.desc, indexedBy };
  }

  /** The plans of the backward read of a listing's first page (tests), or undefined when its page is read otherwise. */
  async explainBackward(base: BaseRef, input: ListInput, viewer: Viewer, boundary: unknown): Promise<{ backward: string; ties: string; empty: string } | undefined> {
    const q = await this.listing(base, input, viewer);
    const read = this.backwardRead(base.id, q, input.start ?? 0);
    return read && explainSortedBackward(this.db, this.writer.dialect, { ...read, skip: input.start ?? 0, limit: (input.limit ?? ROW_LIMITS.list) + 1 }, boundary);
  }

  /** Where a listing's `cursor` resumes (listing-cursor.ts); a cursor carrying no values (a long text) takes its row's current ones. */
  private async cursorPosition(base: BaseRef, q: Awaited<ReturnType<RowsService['listing']>>, identity: string, cursor: string): Promise<{ id: number; values: unknown[] }> {
    const position = decodeCursor(base.id, identity, cursor, q.sortKeys.length);
    if (position.values !== null) return { id: position.id, values: position.values };
    const values = await repo.sortValuesOf(this.db, base.id, q.table._id, q.sortKeys.map((k) => k.value), position.id);
    if (!values) throw badRequest('cursor invalid: its row no longer exists.');
    return { id: position.id, values };
  }

  /**
   * A jump of `skip` rows into an unfiltered listing: counted through the table's position index
   * (row-indexes.ts), which a deep jump into a big table causes; none for short skips.
   */
  private positionJump(baseId: number, tableId: string, skip: number): repo.PositionJump | undefined {
    if (!this.indexes || skip < this.indexes.options.positionSkip) return undefined;
    this.indexes.notePositions(baseId, tableId);
    const index = this.indexes.positionIndex(baseId, tableId);
    return index ? { index, listed: notArchived(this.writer.dialect) } : undefined;
  }

  /**
   * Where a position jump of `skip` listed rows after `afterId` resumes once the table's counted blocks
   * are built (undefined before: the position index counts every entry; null: no row there).
   */
  private async blockStart(baseId: number, tableId: string, jump: repo.PositionJump, afterId: number, skip: number): Promise<BlockStart | null | undefined> {
    const blocks = this.indexes?.blocks;
    if (!blocks?.options.enabled) return undefined;
    if (!blocks.has(baseId, tableId)) {
      blocks.note(baseId, tableId, jump);
      return undefined;
    }
    return blocks.locate(baseId, tableId, jump, afterId, skip);
  }

  /**
   * A skip of `skip` rows into a listing filtered on one column (SQLite): through that filter's jump index
   * (row-indexes.ts `noteJump`), which a deep skip causes; none for short skips or other listings.
   */
  private jumpIndex(baseId: number, q: { table: TableMeta; jump: JumpUse | undefined; jumpMany: JumpManyListing | undefined }, skip: number): string | undefined {
    if (!this.indexes || skip < this.indexes.options.positionSkip) return undefined;
    if (!q.jump) {
      // Filtered on several columns or sorted on several: that listing's jump index of several.
      if (!q.jumpMany) return undefined;
      this.indexes.noteJumpMany(baseId, q.table, q.jumpMany);
      return this.indexes.jumpManyIndex(baseId, q.table._id, q.jumpMany);
    }
    this.indexes.noteJump(baseId, q.table, q.jump);
    return this.indexes.jumpIndex(baseId, q.table._id, q.jump);
  }

  /**
   * PostgreSQL: where a skip of `skip` rows to `start` into a listing filtered on at most one column and
   * sorted on at most one resumes — after the row before `start`, found by an index-only scan of the
   * listing's jump set (jump-sets.ts), which a deep skip causes; null when the listing has fewer rows
   * than `start`; undefined for short skips, other listings, or no set built yet.
   */
  private async jumpSetStart(baseId: number, q: { table: TableMeta; jumpSet: JumpSetListing | undefined; filterOnly: Expression<SqlBool> | undefined; terms: Array<{ key: string; where: Expression<SqlBool> }> }, start: number, skip: number): Promise<(PageEnd & { position: number }) | null | undefined> {
    if (!this.indexes || !q.jumpSet || skip < this.indexes.options.positionSkip) return undefined;
    this.indexes.noteJumpSet(baseId, q.table, q.jumpSet);
    const set = this.indexes.jumpSet(baseId, q.table._id, q.jumpSet);
    if (!set) return undefined;
    const anchor = await jumpAnchor(this.db, set, q.filterOnly, start - 1, (this.indexes.options.jumpKeyReads ? jumpKeyTerm(set, q.terms) : undefined));
    if (!anchor) return null;
    return { position: start, afterId: anchor.id, ...(anchor.values.length > 0 ? { values: anchor.values } : {}) };
  }

  /** The plan of the jump-set read a deep `start` into a listing makes (tests: index-only), or undefined when it makes none. */
  async explainJumpSet(base: BaseRef, input: ListInput, viewer: Viewer, extraFilter?: Body): Promise<string | undefined> {
    const q = await this.listing(base, input, viewer, extraFilter);
    const set = q.jumpSet && this.indexes?.jumpSet(base.id, q.table._id, q.jumpSet);
    return set ? explainJumpAnchor(this.db, set, q.filterOnly, Math.max(0, (input.start ?? 0) - 1), (this.indexes?.options.jumpKeyReads ? jumpKeyTerm(set, q.terms) : undefined)) : undefined;
  }

  /** Pages read from the other direction's index backwards (backward-sort-read.ts; tests). */
  backwardPages = 0;

  /** Where pages of unsorted listings end, per revision (deep pages without reading the rows before them). */
  readonly positions = new ListingPositions();

  /** The database's plan for a `listJson` page (tests and operations: which index answers it). */
  async explainList(base: BaseRef, input: ListInput, viewer: Viewer, extraFilter?: Body): Promise<string> {
    const q = await this.listing(base, input, viewer, extraFilter);
    const hinted = (await this.indexes?.hintTerm(base.id, q.table._id, q.terms, q.firstSort)) ?? {};
    const start = input.start ?? 0;
    const positions = q.filtered || q.query.orderBy.length > 0 ? undefined : this.positionJump(base.id, q.table._id, start);
    const jumpIndex = this.jumpIndex(base.id, q, start);
    const index = jumpIndex ?? hinted.index;
    const search = index ? undefined : await this.searchRead(base.id, q, 'page');
    return repo.explainListRowTexts(this.db, this.writer.dialect, {
      ...q.query,
      offset: start,
      limit: input.limit ?? ROW_LIMITS.list,
      ...(index ? { indexedBy: index } : {}),
      ...(!jumpIndex && hinted.narrowing ? { narrowing: hinted.narrowing } : {}),
      ...(positions ? { positions } : {}),
      ...(search ? { search } : {}),
    });
  }

  /**
   * Every row of a table or a view (its filters and sorts, presented as `list` presents them), a page
   * at a time, in the listing's order, for exports. Without sort terms the pages are read in keyset
   * order (by id, the listing's own order then), so the whole table costs linear time in flat memory;
   * with sort terms the sorted ids are read once (8 bytes a row) and the rows fetched by id a page at a time.
   */
  async *scan(base: BaseRef, input: Omit<ListInput, 'start' | 'limit'>, viewer: Viewer, page: number = ROW_LIMITS.list): AsyncGenerator<Record<string, unknown>[]> {
    const q = await this.listing(base, input, viewer);
    const parse = (json: string) => (JSON.parse(json) as { rows: Record<string, unknown>[] }).rows;
    if (q.query.orderBy.length === 0) {
      // A filtered page may read far into a big table to fill: on a reader thread then.
      const reader = await this.readerFor(base.id, q.table._id, q.filtered);
      // Page by page: a term many rows hold is read in id order (the index would list the rest at each page).
      const search = await this.searchRead(base.id, q, 'page', reader);
      for (let afterId = 0; ; ) {
        const rows = await repo.listRowTextsAfter(reader, this.writer.dialect, { ...q.query, afterId, limit: page, ...(search ? { search } : {}) });
        if (rows.length > 0) yield parse(await this.pageJson(base, q, rows.map((r) => r.r)));
        if (rows.length < page) return;
        afterId = rows[rows.length - 1]!.id;
      }
    }
    // Every match is read: through the trigram index whatever their number (no probe).
    const search = await this.searchRead(base.id, q, 'all');
    const ids = await repo.sortedRowIds(this.db, this.writer.dialect, search ? { ...q.query, where: andAll([...(q.query.where ? [q.query.where] : []), repo.searchCondition(this.writer.dialect, search)]) } : q.query);
    for (let i = 0; i < ids.length; i += page) {
      const texts = await repo.rowTextsByIds(this.db, this.writer.dialect, base.id, ids.subarray(i, i + page));
      yield parse(await this.pageJson(base, q, texts));
    }
  }

  /** A listing's table, view, presentation and query (filters and sorts), without its page. */
  private async listing(base: BaseRef, input: ListInput, viewer: Viewer, extraFilter?: Body) {
    const meta = await this.readMeta.read(base);
    const table = findTable(meta, input);
    const view = optionalView(table, input);
    const byName = parseConvertKeys(input.convert_keys, extraFilter !== undefined);
    const ctx = this.filterContext(viewer);
    const conditions: Array<Expression<SqlBool> | undefined> = [notArchived(this.writer.dialect)];
    const filters = [view && view.filters.length > 0 ? compileFilter(table, view) : null, extraFilter ? compileFilter(table, extraFilter) : null];
    for (const filter of filters) if (filter) conditions.push(filterWhere(filter, ctx, this.writer.dialect));
    const where = conditions.filter((c): c is Expression<SqlBool> => c !== undefined);
    // The filters alone (a jump set holds listed rows only).
    const filterTerms = where.slice(1);
    const filterOnly = filterTerms.length === 0 ? undefined : filterTerms.length === 1 ? filterTerms[0] : andAll(filterTerms);
    const sorts = this.sorts(table, view, input);
    // A table-scoped token reads no cell beyond its scope, and may not filter or sort by one: neither
    // the request nor the view it lists (whose rows and order would show what the cells hide). A view
    // share lists its view as the owner shared it (its own filters and sorts apply; docs/permissions.md).
    const beyond = columnsBeyond(input.scopeTables, meta.tables, table);
    if (beyond.size > 0) {
      const sortedBy = typeof input.order_by === 'string' ? lookupColumn(table, input.order_by)?.key : undefined;
      const viewTerms = input.sharedView || !view ? [] : [...(filters[0]?.columnKeys ?? []), ...(sortedBy === undefined ? sorts.map((s) => s.column.key) : [])];
      refuseBeyondScope(beyond, [...(filters[1]?.columnKeys ?? []), ...(sortedBy === undefined ? [] : [sortedBy]), ...viewTerms]);
    }
    this.indexes?.note(base.id, table, indexUses(table, filters.map((f) => f?.root ?? null), sorts));
    const query = {
      baseId: base.id,
      tableId: table._id,
      where: where.length === 0 ? undefined : where.length === 1 ? where[0] : andAll(where),
      orderBy: orderTerms(sorts, this.writer.dialect),
    };
    // What a row index can answer (rows/row-indexes.ts): the filters' top-level terms and the first sort.
    const terms = filters.flatMap((f) => (f ? indexableTerms(f, ctx, this.writer.dialect) : []));
    // `contains` terms a trigram index may narrow by (the first such listing of a big table has it built).
    const search = [...new Set(filters.flatMap((f) => (f ? searchTerms(f, ctx) : [])))];
    if (search.length > 0) this.indexes?.noteSearch(base.id, table._id);
    const firstSort = sorts[0] ? { key: sorts[0].column.key, desc: sorts[0].desc } : undefined;
    const filtered = filters.some((f) => f !== null);
    const sortKeysOf = sortKeys(sorts, this.writer.dialect);
    // What the sort is (page ends are kept per listing and sort).
    const sortKey = sorts.map((s) => `${s.column.key}:${s.desc ? 'desc' : 'asc'}`).join(',');
    // What a cursor's sort values mean: the columns, directions and the types they compare as (listing-cursor.ts).
    const sortIdentity = JSON.stringify(sorts.map((s) => [s.column.key, s.column.type, (s.column.data as { result_type?: unknown } | null | undefined)?.result_type ?? null, s.desc]));
    const viewId = view?._id ?? null;
    // A listing filtered on one column and sorted on at most one can jump deep through a jump index (row-indexes.ts).
    const filterKeys = new Set(filters.flatMap((f) => (f ? f.columnKeys : [])));
    const filterColumn = filterKeys.size === 1 ? table.columns.find((c) => filterKeys.has(c.key)) : undefined;
    const jump: JumpUse | undefined = filterColumn && sorts.length <= 1 ? { filter: filterColumn, ...(sorts[0] ? { sort: { column: sorts[0].column, desc: sorts[0].desc } } : {}) } : undefined;
    // PostgreSQL: a listing filtered on at most one column and sorted on at most one jumps through a jump set (jump-sets.ts).
    // Filtered on several columns (up to 3) or sorted on several (up to 3): a jump index (SQLite) or a jump set (PostgreSQL) of several.
    const filterColumns = [...filterKeys].map((key) => table.columns.find((c) => c.key === key));
    const jumpMany: JumpManyListing | undefined =
      (filterKeys.size > 1 || sorts.length > 1) && filterKeys.size <= JUMP_MANY_MAX && sorts.length <= JUMP_MANY_MAX && filterColumns.every((c) => c !== undefined)
        ? { filters: filterColumns as TableMeta['columns'], sorts: sorts.map((s) => ({ column: s.column, desc: s.desc })) }
        : undefined;
    const jumpSet: JumpSetListing | undefined =
      (!filtered || filterColumn) && sorts.length <= 1 && (filterColumn || sorts[0])
        ? { ...(filterColumn ? { filter: filterColumn } : {}), ...(sorts[0] ? { sort: { column: sorts[0].column, desc: sorts[0].desc } } : {}) }
        : jumpMany
          ? { many: jumpMany }
          : undefined;
    // A listing sorted on one column only (an index of either direction orders it all).
    const onlySort = sorts.length === 1 && sortKeysOf.length === 1 ? sorts[0] : undefined;
    return { meta, table, presenter: listingPresenter(withinScope(visibleColumns(table, view), beyond), byName), query, terms, firstSort, filtered, sortKeys: sortKeysOf, sortKey, sortIdentity, viewId, jump, jumpMany, jumpSet, filterOnly, onlySort, search };
  }

  /**
   * The trigram index a listing's read narrows by, with its `contains` terms (RowIndexes.searchNarrowing), or
   * undefined; its probe (reading up to `searchCap` ids) runs where the read runs (a reader thread for a big SQLite table).
   */
  private async searchRead(baseId: number, q: { table: TableMeta; search: string[] }, reads: 'page' | 'all', reader: Executor = this.db): Promise<repo.SearchRead | undefined> {
    if (q.search.length === 0 || !this.indexes) return undefined;
    const read = await this.indexes.searchNarrowing(baseId, q.table._id, q.search, reads, reader);
    if (read) this.searchedPages++;
    return read;
  }

  /** Pages read through a trigram index (search-index.ts; tests). */
  searchedPages = 0;

  /**
   * A page of row texts as the `rows/` answer's JSON text: presented from the fragments kept under
   * them (row-fragments.ts), link cells spliced in.
   */
  private async pageJson(base: BaseRef, q: { meta: BaseMetadata; table: TableMeta; presenter: ReturnType<typeof listingPresenter> }, texts: string[], nextCursor?: string): Promise<string> {
    const { presenter } = q;
    const fragments = this.fragments.fragments(base.id, presenter, texts);
    const links =
      presenter.linkKeys.length === 0
        ? []
        : await loadLinkJson(this.db, this.writer.dialect, base.id, q.meta, q.table, presenter.linkKeys, fragments.map((f) => f.rowId));
    let json = '{"rows":[';
    for (let i = 0; i < fragments.length; i++) json += (i === 0 ? '' : ',') + rowJson(fragments[i]!, links);
    return nextCursor === undefined ? `${json}]}` : `${json}],"next_cursor":${JSON.stringify(nextCursor)}}`;
  }

  private sorts(table: TableMeta, view: ViewMeta | undefined, input: ListInput) {
    if (input.order_by) {
      const column = lookupColumn(table, input.order_by);
      if (!column) throw notFound(`column ${input.order_by} not found`);
      const direction = (input.direction ?? '').toLowerCase();
      if (direction !== '' && direction !== 'asc' && direction !== 'desc') throw badRequest('direction invalid.');
      return [{ column, desc: direction === 'desc' }];
    }
    return (view?.sorts ?? []).flatMap((s) => {
      const column = table.columns.find((c) => c.key === s.column_key);
      return column ? [{ column, desc: s.sort_type === 'down' }] : [];
    });
  }

  private async present(base: BaseRef, meta: BaseMetadata, table: TableMeta, columns: TableMeta['columns'], rows: StoredRow[], byName: boolean) {
    const links = await loadLinkCells(this.db, base.id, meta, table, columns, rows.map((r) => r._id), undefined, this.writer.dialect);
    return rows.map((r) => presentRow(r, columns, byName, links));
  }

  async get(base: BaseRef, rowId: string, input: ListInput): Promise<Record<string, unknown>> {
    const meta = await this.writer.read(base);
    const table = findTable(meta, input);
    const byName = parseConvertKeys(input.convert_keys, false);
    const row = (await repo.findRows(this.db, base.id, table._id, [rowId])).get(rowId);
    if (!row) throw notFound('row _id not exits');
    const [presented] = await this.present(base, meta, table, withinScope(table.columns, columnsBeyond(input.scopeTables, meta.tables, table)), [row], byName);
    return presented!;
  }

  /**
   * `hold`: one batch of a multi-batch write: its events are kept aside under `hold.id` and its rows
   * stored staged under `hold.stage`, both invisible until `publishHold` (see staging.ts).
   */
  // `limit`: a view-limited token's new rows — the view's table and visible columns only (view-limit.ts).
  async append(base: BaseRef, actor: Actor, body: Body, hold?: StagedHold, limit?: ViewLimit) {
    const rows = appendInput(body);
    if (rows.length > ROW_LIMITS.append) throw badRequest(`Number of rows to append exceeds ${ROW_LIMITS.append}.`);
    // New rows only: the base's lock can wait until the end (PostgreSQL; see BaseWriter).
    return this.writer.write(
      base,
      actor,
      (w) => {
        if (limit) {
          const { table, view } = limitedView(w.meta, body, limit);
          refuseHiddenColumns(table, view, rows);
        }
        return this.appendIn(hold?.newTables?.length ? withStagedTables(w, hold.newTables) : w, body, rows);
      },
      { lockLate: true, oneStatement: rows.length <= ONE_STATEMENT_MAX_ROWS, ...(hold ? { holdEvents: hold.id, stage: hold.stage } : {}) },
    );
  }

  /**
   * Publishes a staged multi-batch write in one transaction: its new tables enter the metadata (and the
   * tables they replace leave it), its staged rows of `tableIds` and of the new tables move into their
   * tables, its kept cell changes to existing rows are applied (a page at a time, with their modify
   * events; a row deleted or locked meanwhile fails the whole publish), `alsoIn` runs (e.g. the caller's
   * job record is closed), and its held events enter the outbox after the new tables' structure events.
   * A table deleted meanwhile, or a new table's name taken meanwhile, is a 400 and publishes nothing
   * (undo the hold then).
   */
  publishHold(base: BaseRef, actor: Actor, hold: StagedHold, tableIds: readonly string[], alsoIn?: (trx: Executor) => Promise<void>): Promise<number> {
    const newTables = hold.newTables ?? [];
    return this.writer.releaseHold(
      base,
      actor,
      hold.id,
      async (w) => {
        for (const tableId of tableIds) {
          if (!w.meta.tables.some((t) => t._id === tableId)) throw badRequest(`Table ${tableId} was deleted during the import.`);
        }
        if (newTables.length > 0) {
          const { replaced, kept } = await untouchedTables(w, hold.replaces ?? []);
          for (const table of newTables) {
            const clash = w.meta.tables.find((t) => !replaced.has(t._id) && !kept.has(t._id) && (t.name === table.name || t._id === table._id));
            if (clash) throw badRequest(`Table ${clash.name} was created during the import; the import's table ${table.name} cannot be added.`);
          }
          // A replaced table someone worked in stays; it makes way for an import table of its name by a new name.
          for (const table of w.meta.tables) {
            if (kept.has(table._id) && newTables.some((t) => t.name === table.name)) table.name = freeName(table.name, [...w.meta.tables, ...newTables]);
          }
          w.meta.tables.push(...structuredClone(newTables));
          for (const tableId of replaced) {
            const table = w.meta.tables.find((t) => t._id === tableId);
            if (table) await removeTableIn(w, this.writer, table, false);
          }
          w.metadataChanged();
        }
        // The new tables' rows are under their ids already (WriteScope `unlisted`): listing the tables publishes them.
        await publishStaged(w.trx, base.id, hold.stage, tableIds);
      },
      async (w, flush) => {
        for await (const page of heldUpdatePages(w.trx, hold.id)) {
          // Consecutive changes of one table are one update (a row named twice is changed in order).
          for (let i = 0; i < page.length; ) {
            const tableId = page[i]!.tableId;
            let j = i;
            while (j < page.length && page[j]!.tableId === tableId) j++;
            const items = page.slice(i, j).map((u) => ({ row_id: u.rowId, row: u.cells }));
            await this.updateIn(w, { table_id: tableId }, items);
            i = j;
          }
          await flush();
        }
        await discardHeldUpdates(w.trx, hold.id);
        if (alsoIn) await alsoIn(w.trx);
      },
    );
  }

  /**
   * Undoes the writes made under a hold whose events were not released: its staged rows (and the rows
   * of its unpublished new tables) are deleted,
   * the cells it updated get their values before it back, its held events are dropped; `alsoIn` runs in
   * the same transaction.
   */
  undoHold(base: BaseRef, actor: Actor, hold: UndoableHold, alsoIn?: (trx: Executor) => Promise<void>): Promise<void> {
    return this.writer.write(base, actor, async (w) => {
      await undoHeldWrites(w, hold);
      if (alsoIn) await alsoIn(w.trx);
    });
  }

  /**
   * Appends rows under ids the client chose (dtable-store names the rows it inserts, and later changes
   * them by those ids): each id must be a 22-character row id not used in the base yet.
   */
  async appendWithIds(base: BaseRef, actor: Actor, body: Body, ids: string[]) {
    const rows = appendInput(body);
    if (rows.length > ROW_LIMITS.append) throw badRequest(`Number of rows to append exceeds ${ROW_LIMITS.append}.`);
    if (ids.length !== rows.length || !ids.every((id) => ROW_ID.test(id)) || new Set(ids).size !== ids.length) throw badRequest('row _id invalid.');
    return this.writer.write(base, actor, async (w) => {
      if ((await repo.findRowsInBase(w.trx, base.id, ids)).size > 0) throw badRequest('The row inserted is exist.');
      return this.appendIn(w, body, rows, ids);
    });
  }

  /**
   * `hold`: one batch of a multi-batch write: its cell changes are checked and kept aside (held-writes.ts),
   * the rows do not change until `publishHold` applies them with the rest of the write.
   * `limit`: a view-limited token's write — the view's visible columns of the rows it shows only (view-limit.ts).
   */
  async update(base: BaseRef, actor: Actor, body: Body, hold?: StagedHold, limit?: ViewLimit) {
    const items = updateInput(body);
    if (items.length > ROW_LIMITS.update) throw badRequest(`Number of rows to update exceeds ${ROW_LIMITS.update}.`);
    if (hold) {
      const table = findTable(await this.writer.read(base), body);
      // Values a column refuses are refused now, as the write would refuse them (the check's new options are dropped).
      const input = new RowInput(structuredClone(table));
      for (const { row_id, row } of items) input.apply({}, row, `Row ${row_id}`);
      await holdUpdates(this.db, hold.id, table._id, items.map((u) => ({ rowId: u.row_id, cells: u.row })), this.writer.now());
      return { success: true as const };
    }
    await this.writer.write(base, actor, async (w) => {
      if (limit) {
        const { table, view } = limitedView(w.meta, body, limit);
        refuseHiddenColumns(table, view, items.map((i) => i.row));
        await refuseRowsOutsideView(w.trx, w.dialect, base.id, table, view, this.filterContext(limit.viewer), items.map((i) => i.row_id));
      }
      return this.updateIn(w, body, items);
    });
    return { success: true as const };
  }

  /** `limit`: a view-limited token's deletion — rows the view shows only. */
  async remove(base: BaseRef, actor: Actor, body: Body, limit?: ViewLimit) {
    const ids = removeInput(body);
    if (ids.length > ROW_LIMITS.delete) throw badRequest(`Number of rows to delete exceeds ${ROW_LIMITS.delete}.`);
    const deleted = await this.writer.write(base, actor, async (w) => {
      if (limit) {
        const { table, view } = limitedView(w.meta, body, limit);
        await refuseRowsOutsideView(w.trx, w.dialect, base.id, table, view, this.filterContext(limit.viewer), ids);
      }
      return this.removeIn(w, body, ids);
    });
    return { success: true as const, deleted_rows: deleted };
  }

  /**
   * Several row writes in ONE transaction, without the per-call row limits (the SQL endpoint's
   * unlimited INSERT/UPDATE/DELETE): all of them are written, with their events, or none.
   */
  writeMany<T>(base: BaseRef, actor: Actor, work: (rows: ScopedRowWriter) => Promise<T>): Promise<T> {
    return this.writer.write(base, actor, (w) =>
      work({
        trx: w.trx,
        append: (body) => this.appendIn(w, body, appendInput(body)),
        update: (body) => this.updateIn(w, body, updateInput(body)),
        remove: (body) => this.removeIn(w, body, removeInput(body)),
        lock: (body, locked) => lockRowsIn(w, body, locked),
        link: async (body) => {
          await changeLinksIn(w, this.writer.timeZone, body, 'add');
        },
      }),
    );
  }

  /** One write of a restore (see RestoreScope). */
  restore<T>(base: BaseRef, actor: Actor, work: (scope: RestoreScope) => Promise<T>): Promise<T> {
    return this.writer.write(base, actor, (w) =>
      work({
        trx: w.trx,
        meta: w.meta,
        find: (tableId, ids) => repo.findRows(w.trx, base.id, tableId, ids),
        remove: (tableId, ids) => this.removeIn(w, { table_id: tableId }, ids),
        setCells: (tableId, changes) => {
          const table = findTable(w.meta, { table_id: tableId });
          const keys = new Set(table.columns.map((c) => c.key));
          return this.updateWith(w, table, changes.map((c) => c.rowId), (data, rowId) => {
            for (const [key, value] of Object.entries(changes.find((c) => c.rowId === rowId)!.data)) {
              if (!keys.has(key)) continue;
              if (value === null || value === undefined) delete data[key];
              else data[key] = value;
            }
          });
        },
        reinsert: (tableId, rows) => this.reinsertIn(w, tableId, rows),
        setLinks: (tableId, rowId, columnKey, ids) => setRowLinks(w, this.writer.timeZone, findTable(w.meta, { table_id: tableId }), rowId, columnKey, ids),
        structure: structureRestore(w, this.writer),
      }),
    );
  }

  private async reinsertIn(w: WriteScope, tableId: string, rows: RestoredRow[]): Promise<number> {
    const table = findTable(w.meta, { table_id: tableId });
    const keys = new Set(table.columns.map((c) => c.key));
    const stored = rows.map((r): StoredRow => {
      const data = Object.fromEntries(Object.entries(r.data).filter(([key]) => keys.has(key)));
      return { _id: r.rowId, _ctime: r.ctime ?? w.now, _mtime: w.now, _creator: r.creator ?? w.actor.user, _last_modifier: w.actor.user, data };
    });
    await this.insertStored(w, table, stored);
    await restoreLinks(w, this.writer.timeZone, table, rows);
    return stored.length;
  }

  /** Formulas, the rows and their insert events (new rows whose cells are final). */
  private async insertStored(w: WriteScope, table: TableMeta, stored: StoredRow[]): Promise<string[] | undefined> {
    await computeFormulas(w, this.writer.timeZone, table, stored, true);
    // SQLite stores each row's cells as JSON text: written once, for the row and its insert event.
    const texts = w.dialect === 'sqlite' ? stored.map((r) => JSON.stringify(r.data)) : undefined;
    const tableId = w.stage && !w.unlisted?.has(table._id) ? stagingTableId(w.stage, table._id) : table._id;
    if (w.statement) repo.addNewRows(w.statement, w.base.id, tableId, stored);
    else await repo.insertRows(w.trx, w.base.id, tableId, stored, texts);
    w.emit(insertEvents(w.base, table, stored, w.actor, w.now, texts));
    return texts;
  }

  private async appendIn(w: WriteScope, body: Body, rows: Body[], ids?: string[]) {
    const applyDefault = body.apply_default === true || body.apply_default === 'true';
    const { base, actor } = w;
    const table = findTable(w.meta, body);
    const input = new RowInput(table);
    let countersMoved = false;
    const stored = rows.map((values, index): StoredRow => {
      const data: Record<string, unknown> = {};
      const label = `Row ${index + 1}`;
      input.apply(data, values, label);
      if (applyDefault) input.applyDefaults(data, label);
      countersMoved = input.fillAutoNumbers(data, w.now) || countersMoved;
      return { _id: ids?.[index] ?? newRowId(), _ctime: w.now, _mtime: w.now, _creator: actor.user, _last_modifier: actor.user, data };
    });
    if (countersMoved || input.optionsAdded()) w.metadataChanged('contents');
    await this.insertStored(w, table, stored);
    return {
      inserted_row_count: stored.length,
      row_ids: stored.map((r) => ({ _id: r._id })),
      first_row: stored[0] ? presentRowByKeys(stored[0], dateColumnKeys(table.columns)) : null,
    };
  }

  private async updateIn(w: WriteScope, body: Body, items: UpdateItem[]): Promise<number> {
    const table = findTable(w.meta, body);
    const input = new RowInput(table);
    // A row may be named twice: the callback sees each row once, so it applies that row's items in order.
    const byRow = new Map<string, Body[]>();
    for (const { row_id, row } of items) byRow.set(row_id, [...(byRow.get(row_id) ?? []), row]);
    return this.updateWith(w, table, [...byRow.keys()], (data, rowId) => {
      for (const row of byRow.get(rowId)!) input.apply(data, row, `Row ${rowId}`);
    }, () => input.optionsAdded());
  }

  /** Change existing rows of `table` by `apply` (on a copy of each row's cells); store, emit and propagate the changed ones. */
  private async updateWith(
    w: WriteScope,
    table: TableMeta,
    rowIds: string[],
    apply: (data: Record<string, unknown>, rowId: string) => void,
    optionsAdded: () => boolean = () => false,
  ): Promise<number> {
    const { base, actor } = w;
    const before = await repo.findRows(w.trx, base.id, table._id, rowIds);
    const missing = rowIds.find((id) => !before.has(id));
    if (missing) throw notFound(`row ${missing} not found`);
    await refuseLockedRows(w, before.values());
    const after = new Map<string, StoredRow>();
    for (const rowId of rowIds) {
      const current = { ...before.get(rowId)!, data: { ...before.get(rowId)!.data } };
      apply(current.data, rowId);
      after.set(rowId, current);
    }
    if (optionsAdded()) w.metadataChanged('contents');
    await computeFormulas(w, this.writer.timeZone, table, [...after.values()]);
    const changed = [...after.values()].filter((r) => !sameCells(before.get(r._id)!.data, r.data));
    for (const r of changed) {
      r._mtime = w.now;
      r._last_modifier = actor.user;
    }
    await repo.updateRows(w.trx, w.dialect, base.id, changed.map((r) => ({ rowId: r._id, data: r.data })), {
      mtime: w.now,
      modifier: actor.user,
    });
    w.emit(changed.flatMap((r) => modifyEvent(base, table, before.get(r._id)!, r, actor, w.now) ?? []));
    const keys = changedCellKeys(changed.map((r) => [before.get(r._id)!.data, r.data]));
    await propagateLinkFormulas(w, this.writer.timeZone, table, changed.map((r) => r._id), 0, keys);
    return changed.length;
  }

  private async removeIn(w: WriteScope, body: Body, ids: string[]): Promise<number> {
    const { base, actor } = w;
    const table = findTable(w.meta, body);
    const rows = [...(await repo.findRows(w.trx, base.id, table._id, ids)).values()];
    await refuseLockedRows(w, rows);
    const rowIds = rows.map((r) => r._id);
    const dependents = await dependentRows(w, table, rowIds);
    const links = await linksOfRows(w, table, rowIds);
    await repo.deleteRows(w.trx, base.id, rowIds);
    await removeLinksOfRows(w.trx, base.id, rowIds);
    for (const dependent of dependents.values()) await recomputeLinkFormulas(w, this.writer.timeZone, dependent.table, dependent.ids);
    w.emit(rows.map((r) => deleteEvent(base, table, r, actor, w.now, links.get(r._id))));
    return rows.length;
  }

  /**
   * The whole base: metadata with each table's rows keyed by column key (at most `perTable` rows each),
   * as JSON text; rows come from the fragments kept under their row texts (row-fragments.ts).
   */
  async dtable(base: BaseRef, perTable = 10_000): Promise<SerializedJson> {
    const meta = await this.readMeta.read(base);
    const tables: string[] = [];
    // Checked as it grows: a body above the limit is refused (wholeBaseBody) before V8's string limit is near.
    let length = 0;
    for (const table of meta.tables) {
      const rows: string[] = [];
      const presenter = byKeysPresenter(dateColumnKeys(table.columns));
      for await (const batch of repo.scanTableTexts(this.db, this.writer.dialect, base.id, table._id)) {
        for (const fragment of this.fragments.fragments(base.id, presenter, batch)) {
          if (rows.length < perTable && !fragment.archived) {
            rows.push(fragment.segments[0]!);
            length += fragment.segments[0]!.length + 1;
          }
        }
        if (length > sizeLimits().baseReadMaxBytes) throw tooLargeToRead();
        if (rows.length >= perTable) break;
      }
      tables.push(spliceJson({ ...table, rows: SPLICE }, `[${rows.join(',')}]`));
    }
    return new SerializedJson(spliceJson({ ...meta, settings: presentSettings(meta.settings ?? {}), tables: SPLICE }, `[${tables.join(',')}]`));
  }
}

/**
 * Which of a staged write's replaced tables (as they were when it began) still are as they were, the
 * same structure and the same rows: those are removed at the publish; the others (rows written,
 * changed or deleted, or structure changed meanwhile) are kept, so no one's work is lost.
 */
async function untouchedTables(w: WriteScope, before: readonly ReplacedTable[]): Promise<{ replaced: Set<string>; kept: Set<string> }> {
  const replaced = new Set<string>();
  const kept = new Set<string>();
  for (const old of before) {
    const now = w.meta.tables.find((t) => t._id === old.table._id);
    if (!now) continue;
    const untouched = JSON.stringify(now) === JSON.stringify(old.table) && (await repo.rowsFingerprint(w.trx, w.base.id, now._id)) === old.rows;
    (untouched ? replaced : kept).add(now._id);
  }
  return { replaced, kept };
}

/** `name (2)`, `name (3)`, …: the first no table in `tables` has. */
function freeName(name: string, tables: readonly TableMeta[]): string {
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!tables.some((t) => t.name === candidate)) return candidate;
  }
}

/** Both filters (a view's and the request's) must hold. */
function andAll(parts: Expression<SqlBool>[]): Expression<SqlBool> {
  return parts.reduce((acc, part) => sql<SqlBool>`(${acc} and ${part})`);
}

/**
 * The write scope as a staged write's appends see it: its new tables (StagedHold `newTables`) beside
 * the base's, first, so a `table_id` finds the staged table. Only the view has them; the metadata the
 * write stores stays the base's. Cells may add select options or move auto-number counters of a staged
 * table: those land in its in-memory metadata, which `publishHold` stores.
 */
function withStagedTables(w: WriteScope, tables: readonly TableMeta[]): WriteScope {
  // Their rows go under their own ids (WriteScope `unlisted`): a table listed meanwhile under one of them would show them.
  const clash = tables.find((t) => w.meta.tables.some((m) => m._id === t._id));
  if (clash) throw badRequest(`A table with the id of the import's table ${clash.name} was created during the import.`);
  return { ...w, meta: { ...w.meta, tables: [...(tables as TableMeta[]), ...w.meta.tables] }, unlisted: new Set(tables.map((t) => t._id)) };
}

/** The listing's indexable term on a jump set's filter column (a range of its keyed index; implied by the filter), if any. */
function jumpKeyTerm(set: JumpSet, terms: Array<{ key: string; where: Expression<SqlBool> }>): Expression<SqlBool> | undefined {
  return set.use.filter ? terms.find((t) => t.key === set.use.filter!.key)?.where : undefined;
}
