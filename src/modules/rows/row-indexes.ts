import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { longStatement, longStatementTimeout, type DialectName, type Db, type Executor } from '../../db/index.js';
import { createHash } from 'node:crypto';
import { indexableKey, indexedValue, sqliteType, type ParsedCondition } from '../filters/index.js';
import type { BaseMetadata } from './metadata.js';
import { countThroughIndex, onRowIndexGone, ORDERED_SCAN, scopableTableId } from './rows.repository.js';
import { notArchived } from './archived-rows.js';
import { indexValueType } from './sort-sql.js';
import { PositionBlocks } from './position-blocks.js';
import { hasRows } from './table-sizes.js';
import { countSearchMatches, dropSqliteSearch, fillSqliteSearch, POSTGRES_SEARCH_TEXT, postgresSearchEstimate, postgresSearchIndexSql, SEARCH_STATISTICS, sqliteSearchDdl, trigramSchema } from './search-index.js';
import { buildJumpSet, dropJumpSet, jumpSetName, loadJumpSets, recoverJumpSets, type JumpSet, type JumpSetUse } from './jump-sets.js';

/**
 * Expression indexes on `base_rows` that follow use (docs/base-data.md, "Row indexes").
 *
 * When a listing of a big table (at least `minRows` rows) filters or sorts on a column, an index is
 * built in the background for that table's cells of that column: partial (`WHERE base_id = … AND
 * table_id = …`, so other tables' writes never touch it) and on exactly the expression filters and sorts
 * write (filters/cell-sql.ts), followed by the row id (the listings' tie-break). Kinds:
 * - `filter`: value, id — ranges and equality of numbers, texts, dates and single selects;
 * - `asc` / `desc`: the sort order, NULLs last, then id — a sorted page is read off the index.
 * On PostgreSQL `filter` and `asc` are one index (`value ASC NULLS LAST, id`).
 * - `position` (no column): the ids of the table's listed rows (not archived) — counting N rows into an
 *   unsorted listing reads N index entries and no row, so a jump to a deep page costs what the page costs.
 *
 * Indexes follow the structure: `reconcile` (after every structural commit) drops those whose table or
 * column is gone or whose column now has another value type; a rename changes no key, so nothing. The
 * listing queries write the base and table as literals (`tableScope` in rows.repository.ts) so both planners can prove the
 * partial index's condition.
 */

export type IndexKind = 'filter' | 'asc' | 'desc';
type ValueType = 'number' | 'text';

/** A read of every row in an indexed range, page by page in index order (see RowIndexes.rangeRead). */
export interface RangeRead {
  /** The filter index's name (SQLite: INDEXED BY). */
  index: string;
  /** The indexed expression, on `base_rows.data`. */
  value: RawBuilder<unknown>;
  valueType: ValueType;
  /** The range on the indexed expression alone (implied by the filter). */
  range: Expression<SqlBool>;
}

/** The `kind` and `value_type` of a table's position index (its `column_key` is empty). */
const POSITION = 'position';
/** The `kind` and `value_type` of a table's trigram index of its row texts (search-index.ts; `column_key` empty). */
const SEARCH = 'search';

/**
 * A filtered listing on one column, sorted on at most one other (SQLite): what a jump index serves (see
 * `noteJump`). The sort column is part of the index, so a listing sorted otherwise is not served by it.
 */
export interface JumpUse {
  filter: IndexedColumn;
  sort?: { column: IndexedColumn; desc: boolean };
}

/**
 * A listing filtered on at most one column and sorted on at most one (PostgreSQL): what a jump set
 * serves (jump-sets.ts, `noteJumpSet`).
 */
export interface JumpSetListing {
  filter?: IndexedColumn;
  sort?: { column: IndexedColumn; desc: boolean };
  /** A listing filtered on several columns or sorted on several (instead of `filter` and `sort`). */
  many?: JumpManyListing;
}

/**
 * A listing filtered on up to 3 columns and sorted on up to 3, with more than one of either (both
 * dialects): what a jump index of several (SQLite, `noteJumpMany`) or a jump set of several (PostgreSQL,
 * jump-sets.ts `many`) serves. Filter columns are listed once each.
 */
export interface JumpManyListing {
  filters: IndexedColumn[];
  sorts: Array<{ column: IndexedColumn; desc: boolean }>;
}

/** Most filter columns and most sort columns a jump structure of several serves. */
export const JUMP_MANY_MAX = 3;

/** The `kind` prefix of a jump index of several (SQLite): `jumpm:` then its spec as JSON (`ManySpec`). */
const JUMP_MANY = 'jumpm:';
/** The `value_type` of the entries of jump structures of several. */
const MANY = 'many';

/** What a jump structure of several serves: filter columns `[key, value type]`, sorts `[key, value type, descending]`. */
interface ManySpec {
  f: Array<[string, ValueType]>;
  s: Array<[string, ValueType, boolean]>;
}

function manySpec(kind: string): ManySpec | undefined {
  if (!kind.startsWith(JUMP_MANY)) return undefined;
  try {
    return JSON.parse(kind.slice(JUMP_MANY.length)) as ManySpec;
  } catch {
    return undefined;
  }
}

/** Listing filters whose last way to a page `RowIndexes.noteWalk` keeps (about 100 bytes each). */
const WALKS_KEPT = 10_000;

/** A listing filter's key for `RowIndexes.shouldWalk`: its table and the columns of its indexable terms. */
function walkKey(baseId: number, tableId: string, terms: ReadonlyArray<{ key: string }>): string {
  return `${baseId}/${tableId}/${[...new Set(terms.map((t) => t.key))].sort().join(',')}`;
}

/** The `kind` of a jump set's `row_indexes` entry (its name is the set's covering index). */
const JUMP_SET = 'jumpset';

/** The `kind` of a jump index: `jump`, or `jump:asc:<sort key>` / `jump:desc:<sort key>`. */
function jumpKind(sort: { key: string; desc: boolean } | undefined): string {
  return sort ? `jump:${sort.desc ? 'desc' : 'asc'}:${sort.key}` : 'jump';
}

/** The sort a jump index's `kind` names (undefined: unsorted), or null for a kind that is no jump index. */
function jumpSort(kind: string): { key: string; desc: boolean } | undefined | null {
  if (kind === 'jump') return undefined;
  const m = /^jump:(asc|desc):(.+)$/.exec(kind);
  return m ? { key: m[2]!, desc: m[1] === 'desc' } : null;
}

export interface RowIndexOptions {
  /** Tables with fewer rows get no index (a scan of them is cheap). */
  minRows: number;
  /** At most this many indexes in the database; further uses build none. */
  maxIndexes: number;
  /** How long a table's "too small" answer is kept before it is counted again. */
  recountMs: number;
  /** A filter term matching fewer rows than this is read through its index (see hint). */
  probeCap: number;
  /**
   * PostgreSQL: rows of an unsorted filtered listing's first pages read in id order before its filter's
   * index is probed (`shouldWalk`): a filter matching many rows fills its page within them, and the probe
   * (up to `probeCap` rows read at random) is skipped. 0: probe first, as SQLite always does.
   */
  walkWindow: number;
  /** Rows skipped from which an unfiltered listing counts through the table's position index instead of reading them. */
  positionSkip: number;
  /** SQL grouped statements over one column read its filter index (SQLite; `filterIndex`, sql/indexed-groups.ts). */
  groupReads: boolean;
  /** Deep jumps into listings filtered on one column read their jump index (SQLite; `noteJump`; off: A/B benches). */
  jumpReads: boolean;
  /** Deep jumps into filtered listings range over their jump set's keyed index (PostgreSQL; jump-sets.ts; off: A/B benches). */
  jumpKeyReads: boolean;
  /** Rows a jump set's build copies per transaction, under the base's write lock (PostgreSQL; jump-sets.ts). */
  jumpSetBatch: number;
  /** A listing sorted on one column whose own index is missing reads the other direction's backwards (`reverseIndex`; off: A/B benches). */
  reverseReads: boolean;
  /** Rows skipped (from the start or a known page end) up to which that backward read is used; beyond, the listing reads as before. */
  reverseSkip: number;
  /** PostgreSQL: number and date columns per table whose filter indexes an import builds right after it (`noteBulkWrite`); 0: none. */
  bulkFilterColumns: number;
  /** Listings filtered by `contains` read through the table's trigram index (search-index.ts; built on their first use; off: A/B benches). */
  searchReads: boolean;
  /** Rows a SQLite trigram index's build copies per statement (each a short stop of the one writer). */
  searchBatch: number;
  /** SQLite: terms the trigram index gives this many rows for or more are read in id order instead (`searchNarrowing`). */
  searchCap: number;
  /** PostgreSQL: what a row read through the trigram index costs against one read in id order (`searchNarrowing`). */
  searchRowCost: number;
}

export const DEFAULT_ROW_INDEX_OPTIONS: RowIndexOptions = { minRows: 20_000, maxIndexes: 2_000, recountMs: 60_000, probeCap: 2_000, walkWindow: 20_000, positionSkip: 1_000, groupReads: true, jumpReads: true, jumpKeyReads: true, jumpSetBatch: 5_000, reverseReads: true, reverseSkip: 1_000, bulkFilterColumns: 3, searchReads: true, searchBatch: 2_000, searchCap: 20_000, searchRowCost: 5 };

interface Entry {
  name: string;
  base_id: number;
  table_id: string;
  column_key: string;
  kind: string;
  value_type: string;
}

/** Longest column key an index is built for (keeps index names under PostgreSQL's 63 characters). */
const MAX_KEY = 8;

/** The parts of a column and a table the indexes read (the rows module's metadata, or a rule's copy of it). */
export interface IndexedColumn {
  key: string;
  type: string;
  data?: unknown;
}
export interface IndexedTable {
  _id: string;
  columns: readonly IndexedColumn[];
}

/** Column types whose filter index an import builds before any filter asks (`noteBulkWrite`): ranges are what big tables are filtered by. */
const LIKELY_FILTERED = new Set(['number', 'date']);

/** The first `limit` number and date columns of a table, in its order, as filter uses. */
function likelyFilters(table: IndexedTable, limit: number): IndexUse[] {
  return table.columns
    .filter((column) => LIKELY_FILTERED.has(column.type))
    .slice(0, limit)
    .map((column) => ({ column, kind: 'filter' as const }));
}

/** A use a listing made of a column: which index kind would serve it. */
export interface IndexUse {
  column: IndexedColumn;
  kind: IndexKind;
}

export class RowIndexes {
  private entries: Map<string, Entry> | null = null;
  private loading: Promise<Map<string, Entry>> | null = null;
  /** Index names being built or waiting, in order; one DDL at a time. */
  private readonly queue: Array<{ name: string; entry: Entry; set?: JumpSetUse }> = [];
  /** PostgreSQL's jump sets, by name (loaded with the entries). */
  private readonly jumpSets = new Map<string, JumpSet>();
  private readonly queued = new Set<string>();
  private running: Promise<void> | null = null;
  /** table → time it was last counted as too small */
  private readonly small = new Map<string, number>();
  /** Built, dropped and failed index builds (for /metrics). */
  readonly stats = { built: 0, dropped: 0, failed: 0 };
  /** Called between two batches of a jump set's copy (tests: a write while a set is built). */
  onJumpSetBatch?: (batch: number) => Promise<void>;
  /** Whether definitions a crashed jump-set build left may exist (checked when the entries load). */
  private recoverPending = false;
  private recoveryStarted = false;

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly now: () => number,
    options: RowIndexOptions = DEFAULT_ROW_INDEX_OPTIONS,
    private readonly log?: (error: unknown, what: string) => void,
  ) {
    this.options = { ...options };
    this.blocks = new PositionBlocks(db, dialect, now, undefined, log);
    onRowIndexGone(this);
  }

  /** The counted blocks of the tables with a position index (position-blocks.ts), built right after it. */
  readonly blocks: PositionBlocks;

  /** An index found missing by a read (dropped behind this registry's back): no longer handed out, built again on its next use. */
  forget(name: string): void {
    this.entries?.delete(name);
  }

  /** Adjustable at run time (tests, benches). */
  readonly options: RowIndexOptions;

  /** The index name of a use (letters, digits and underscores; under 63 characters). */
  static indexName(baseId: number, tableId: string, key: string, kind: IndexKind, valueType: ValueType, dialect: DialectName): string {
    const k = dialect === 'postgres' && kind === 'filter' ? 'asc' : kind;
    // SQLite's sort indexes leave archived rows out (`listedOnly`): a name of their own (`l`), so a sort
    // index built before without that condition is not taken for one (reconcile drops it).
    const listed = listedOnly(dialect, kind) ? 'l' : '';
    return `bri_${baseId}_${hex(tableId)}_${hex(key)}_${k}${listed}_${valueType[0]}`;
  }

  /** The name of a jump index of several (SQLite; see `noteJumpMany`): a digest of its spec. */
  static jumpManyName(baseId: number, tableId: string, spec: ManySpec): string {
    return `bri_${baseId}_${hex(tableId)}_jm${createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 20)}`;
  }

  /**
   * A cold jump deep into a listing filtered on several columns or sorted on several (SQLite, up to 3 of
   * each) calls this: a **jump index of several** is built in the background — the listing's order (each
   * sort value as sort-sql.ts `orderTerms` writes it, empty last), the id, then every filter column's cell
   * and JSON type; partial on the table and the listings' "not archived" term. The listing reads it in its
   * own order and checks its filter on each entry, so the rows before a deep `start` are skipped as index
   * entries, none read.
   */
  noteJumpMany(baseId: number, table: IndexedTable, listing: JumpManyListing): void {
    this.queueEntry(baseId, table._id, this.options.jumpReads ? this.jumpManyEntry(baseId, table._id, listing) : undefined);
  }

  /** Queues an index's build, unless it exists, is queued, or its table was found small lately. */
  private queueEntry(baseId: number, tableId: string, entry: Entry | undefined): void {
    if (!entry || this.entries?.has(entry.name) || this.queued.has(entry.name)) return;
    const smallAt = this.small.get(`${baseId}/${tableId}`);
    if (smallAt !== undefined && this.now() - smallAt < this.options.recountMs) return;
    this.queued.add(entry.name);
    this.queue.push({ name: entry.name, entry });
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** The jump index of several of a listing, once built (see `noteJumpMany`). */
  jumpManyIndex(baseId: number, tableId: string, listing: JumpManyListing): string | undefined {
    const entry = this.options.jumpReads ? this.jumpManyEntry(baseId, tableId, listing) : undefined;
    return entry && this.entries?.has(entry.name) ? entry.name : undefined;
  }

  private jumpManyEntry(baseId: number, tableId: string, listing: JumpManyListing): Entry | undefined {
    if (this.dialect !== 'sqlite' || !scopableTableId(tableId)) return undefined;
    const spec = manySpecOf(listing);
    if (!spec) return undefined;
    const name = RowIndexes.jumpManyName(baseId, tableId, spec);
    return { name, base_id: baseId, table_id: tableId, column_key: spec.f[0]?.[0] ?? spec.s[0]![0], kind: JUMP_MANY + JSON.stringify(spec), value_type: MANY };
  }

  /** The name of a jump index (SQLite; see `noteJump`). */
  static jumpName(baseId: number, tableId: string, key: string, valueType: ValueType, sort: { key: string; desc: boolean } | undefined): string {
    const order = sort ? `${sort.desc ? 'd' : 'a'}${hex(sort.key)}` : '';
    return `bri_${baseId}_${hex(tableId)}_${hex(key)}_jump${order}_${valueType[0]}`;
  }

  /**
   * A cold jump deep into a listing filtered on one column (SQLite) calls this: a **jump index** for that
   * filter (and the listing's one sort column) is built in the background — `(cell, [sort value], id,
   * json_type(cell))`, partial on the table and the listings' "not archived" term. It carries everything
   * the filter reads (the cell's value and JSON type), the listing's order and the archived state, so the
   * rows before a deep `start` are skipped in the index without reading one: an equality filter's rows are
   * one range of it, already in the listing's order; other filters on the column are checked on its entries.
   */
  noteJump(baseId: number, table: IndexedTable, use: JumpUse): void {
    this.queueEntry(baseId, table._id, this.options.jumpReads ? this.jumpEntry(baseId, table._id, use) : undefined);
  }

  /** The jump index of a use, once built (see `noteJump`). */
  jumpIndex(baseId: number, tableId: string, use: JumpUse): string | undefined {
    const entry = this.options.jumpReads ? this.jumpEntry(baseId, tableId, use) : undefined;
    return entry && this.entries?.has(entry.name) ? entry.name : undefined;
  }

  /**
   * A cold jump deep into a listing filtered on at most one column and sorted on at most one
   * (PostgreSQL) calls this: that listing's jump set (jump-sets.ts) is built in the background.
   */
  noteJumpSet(baseId: number, table: IndexedTable, listing: JumpSetListing): void {
    const found = this.jumpSetUse(baseId, table._id, listing);
    if (!found || this.entries?.has(found.name) || this.queued.has(found.name)) return;
    const smallAt = this.small.get(`${baseId}/${table._id}`);
    if (smallAt !== undefined && this.now() - smallAt < this.options.recountMs) return;
    const many = found.use.many;
    const entry: Entry = many
      ? { name: found.name, base_id: baseId, table_id: table._id, column_key: many.filters[0]?.key ?? many.sorts[0]?.key ?? '', kind: JUMP_SET, value_type: MANY }
      : { name: found.name, base_id: baseId, table_id: table._id, column_key: found.use.filter?.key ?? '', kind: JUMP_SET, value_type: found.use.filter?.valueType ?? 'none' };
    this.queued.add(found.name);
    this.queue.push({ name: found.name, entry, set: found.use });
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** The jump set of a listing, once built (see `noteJumpSet`). */
  jumpSet(baseId: number, tableId: string, listing: JumpSetListing): JumpSet | undefined {
    const found = this.jumpSetUse(baseId, tableId, listing);
    return found && this.entries?.has(found.name) ? this.jumpSets.get(found.name) : undefined;
  }

  private jumpSetUse(baseId: number, tableId: string, listing: JumpSetListing): { name: string; use: JumpSetUse } | undefined {
    if (this.dialect !== 'postgres' || !this.options.jumpReads || !scopableTableId(tableId)) return undefined;
    if (listing.many) {
      const spec = manySpecOf(listing.many);
      if (!spec) return undefined;
      const use: JumpSetUse = { many: { filters: spec.f.map(([key, valueType]) => ({ key, valueType })), sorts: spec.s.map(([key, valueType, desc]) => ({ key, valueType, desc })) } };
      return { name: jumpSetName(baseId, tableId, use), use };
    }
    if (!(listing.filter || listing.sort)) return undefined;
    const use: JumpSetUse = {};
    if (listing.filter) {
      const valueType = indexValueType(listing.filter);
      if (!valueType || !indexableKey(listing.filter.key)) return undefined;
      use.filter = { key: listing.filter.key, valueType };
    }
    if (listing.sort) {
      const valueType = indexValueType(listing.sort.column);
      if (!valueType || !indexableKey(listing.sort.column.key)) return undefined;
      use.sort = { key: listing.sort.column.key, valueType, desc: listing.sort.desc };
    }
    return { name: jumpSetName(baseId, tableId, use), use };
  }

  private jumpEntry(baseId: number, tableId: string, use: JumpUse): Entry | undefined {
    if (this.dialect !== 'sqlite' || !scopableTableId(tableId)) return undefined;
    const valueType = indexValueType(use.filter);
    const key = use.filter.key;
    if (!valueType || !indexableKey(key) || key.length > MAX_KEY) return undefined;
    const sortKey = use.sort?.column.key;
    if (use.sort && (!indexValueType(use.sort.column) || !indexableKey(sortKey!) || sortKey!.length > MAX_KEY)) return undefined;
    const sort = use.sort ? { key: sortKey!, desc: use.sort.desc } : undefined;
    const name = RowIndexes.jumpName(baseId, tableId, key, valueType, sort);
    return { name, base_id: baseId, table_id: tableId, column_key: key, kind: jumpKind(sort), value_type: valueType };
  }

  /** Listings call this with the columns their filters and sorts use; indexes are built in the background. */
  note(baseId: number, table: IndexedTable, uses: IndexUse[]): void {
    this.recoverOnce();
    if (uses.length === 0 || !scopableTableId(table._id)) return;
    const wanted: Entry[] = [];
    for (const { column, kind } of uses) {
      const valueType = indexValueType(column);
      if (!valueType || !indexableKey(column.key) || column.key.length > MAX_KEY) continue;
      const name = RowIndexes.indexName(baseId, table._id, column.key, kind, valueType, this.dialect);
      if (this.entries?.has(name) || this.queued.has(name) || wanted.some((w) => w.name === name)) continue;
      const storedKind = this.dialect === 'postgres' && kind === 'filter' ? 'asc' : kind;
      wanted.push({ name, base_id: baseId, table_id: table._id, column_key: column.key, kind: storedKind, value_type: valueType });
    }
    if (wanted.length === 0) return;
    const tableKey = `${baseId}/${table._id}`;
    const smallAt = this.small.get(tableKey);
    if (smallAt !== undefined && this.now() - smallAt < this.options.recountMs) return;
    for (const entry of wanted) {
      this.queued.add(entry.name);
      this.queue.push({ name: entry.name, entry });
    }
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Unsorted listings of a big table read at a deep offset call this: its position index is built in the background. */
  notePositions(baseId: number, tableId: string): void {
    if (!scopableTableId(tableId)) return;
    const name = `bri_${baseId}_${hex(tableId)}_pos`;
    this.queueEntry(baseId, tableId, { name, base_id: baseId, table_id: tableId, column_key: '', kind: POSITION, value_type: POSITION });
  }

  /** Name of a table's trigram index (search-index.ts). */
  static searchName(baseId: number, tableId: string): string {
    return `bri_${baseId}_${hex(tableId)}_search`;
  }

  /** Listings of a big table filtered by a `contains` term call this: its trigram index is built in the background. */
  noteSearch(baseId: number, tableId: string): void {
    if (!this.options.searchReads || !scopableTableId(tableId) || this.noTrigrams) return;
    const name = RowIndexes.searchName(baseId, tableId);
    this.queueEntry(baseId, tableId, { name, base_id: baseId, table_id: tableId, column_key: '', kind: SEARCH, value_type: SEARCH });
  }

  /** A table's trigram index, once built and filled (see `noteSearch`). */
  searchIndex(baseId: number, tableId: string): string | undefined {
    if (!this.options.searchReads) return undefined;
    const name = RowIndexes.searchName(baseId, tableId);
    return this.entries?.has(name) ? name : undefined;
  }

  /**
   * The trigram index a read of `contains` terms should narrow by, or undefined: none built yet, or, for
   * a read that stops at a page (`reads: 'page'`), terms many rows hold — a read in id order fills its page
   * among the first of them, where the index would list all. A read of every match (a sort, a count) always
   * takes it. Many: on SQLite `searchCap` rows or more (counted in the index, at most that many ids); on
   * PostgreSQL more than √(100 ÷ `searchRowCost` × the table's rows) by the planner's estimates
   * (`postgresSearchEstimate`): there a match read through the index costs about `searchRowCost` (5) read
   * in id order (each row's whole text is tested again), and a page in id order reads rows ÷ matches × 100
   * rows, so the two cost the same there.
   * PostgreSQL's planner, left to itself, took the index for a term 11,111 of 1,000,000 rows hold (the
   * filter's own terms made it think them 17): 45 ms against 8 ms in id order.
   */
  async searchNarrowing(baseId: number, tableId: string, terms: readonly string[], reads: 'page' | 'all', executor: Executor = this.db): Promise<{ index: string; terms: readonly string[] } | undefined> {
    const index = terms.length > 0 ? this.searchIndex(baseId, tableId) : undefined;
    if (!index || reads === 'all') return index ? { index, terms } : undefined;
    if (this.dialect === 'postgres') {
      const { matches, rows } = await postgresSearchEstimate(executor, scopeText(baseId, tableId), terms);
      return matches * matches * this.options.searchRowCost < 100 * rows ? { index, terms } : undefined;
    }
    const cap = this.options.searchCap;
    return (await countSearchMatches(executor, index, terms, cap)) < cap ? { index, terms } : undefined;
  }

  /** PostgreSQL without `pg_trgm` (not installed, and not allowed to create it): no trigram indexes. */
  private noTrigrams = false;

  /**
   * A bulk write (an import) filled these tables: on PostgreSQL their position indexes (then their counted
   * blocks) are built in the background now, not at the first deep jump, which until then reads the table
   * (a page 100 rows before the end of a freshly imported 10,000,000-row table: 24 s), and so are the filter
   * indexes of their first `bulkFilterColumns` number and date columns (`likelyFilters`): which column will be
   * filtered is not known before the first filter, which until its index is built reads the table (a range
   * near the end of 10,000,000 freshly imported rows: 8–16 s). Small tables are passed over by the build.
   * Not on SQLite, whose build holds the one writer (about a second per 100,000 rows): there the first deep
   * jump or filter causes it, as before.
   */
  noteBulkWrite(baseId: number, tables: readonly IndexedTable[]): void {
    if (this.dialect !== 'postgres') return;
    for (const table of tables) {
      this.small.delete(`${baseId}/${table._id}`); // counted small before the write, maybe not after it
      this.notePositions(baseId, table._id);
    }
    // Positions of every table first: one build at a time, in the order queued.
    for (const table of tables) this.note(baseId, table, likelyFilters(table, this.options.bulkFilterColumns));
  }

  /** The name of a table's position index, once built (see `notePositions`). */
  positionIndex(baseId: number, tableId: string): string | undefined {
    const name = `bri_${baseId}_${hex(tableId)}_pos`;
    return this.entries?.has(name) ? name : undefined;
  }

  /** Resolves when no index build is queued or running (tests, benches). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
    await this.blocks.idle();
  }

  /** Names of the indexes of a table (tests, docs). */
  async indexesOf(baseId: number, tableId: string): Promise<Entry[]> {
    return [...(await this.load()).values()].filter((e) => e.base_id === baseId && e.table_id === tableId);
  }

  /**
   * Whether an unsorted filtered listing should walk `walkWindow` rows in id order before `hint` probes its
   * terms' indexes: when it would probe (a term's column has its filter index), unless the last page of a
   * listing filtered on the same columns was found through an index (the walk did not fill it, or the
   * probe found the filter narrow). What a filter matches changes with its values, rarely with its use:
   * the last answer for the same columns is the guess.
   */
  shouldWalk(baseId: number, tableId: string, terms: ReadonlyArray<{ key: string }>): boolean {
    // SQLite counts a probe in the filter index alone (a covering read, 2.6 ms for 1,000 matches of 1,000,000
    // rows, where a walk that found none took 19 ms); PostgreSQL reads each counted row at random (15–35 ms).
    if (this.dialect !== 'postgres' || this.options.walkWindow <= 0 || !this.entries || terms.length === 0) return false;
    const keys = new Set(terms.map((t) => t.key));
    let probes = false;
    for (const e of this.entries.values()) if (e.base_id === baseId && e.table_id === tableId && e.kind === 'asc' && keys.has(e.column_key) && current(e, this.dialect)) probes = true;
    return probes && this.walks.get(walkKey(baseId, tableId, terms)) !== false;
  }

  /** How a listing filtered on `terms` found its page: by the walk (`wide`: it matches many rows) or through an index. */
  noteWalk(baseId: number, tableId: string, terms: ReadonlyArray<{ key: string }>, wide: boolean): void {
    const key = walkKey(baseId, tableId, terms);
    this.walks.delete(key);
    this.walks.set(key, wide);
    // Bounded: the oldest answer goes first (a Map iterates in insertion order).
    if (this.walks.size > WALKS_KEPT) this.walks.delete(this.walks.keys().next().value!);
  }

  /** Loads the indexes (and PostgreSQL's jump sets) and the tables' position blocks from the database now, not on first use (BaseData.warm). */
  async warm(): Promise<void> {
    await Promise.all([this.load(), this.blocks.warm()]);
  }

  /** Forgets every listing filter's last way to a page (benches: each request a first guess). */
  forgetWalks(): void {
    this.walks.clear();
  }

  /** The last answer per listing filter (table and columns) of `noteWalk`. */
  private readonly walks = new Map<string, boolean>();

  /**
   * How a listing should read the table, decided by counting through the row indexes of its filter
   * terms (each count stops at `probeCap` rows):
   * - SQLite: the row index to read (`INDEXED BY`, see executeIndexed in rows.repository.ts): a filter
   *   term's index when it narrows the table to fewer than `probeCap` rows, else the index of the first
   *   sort column in its direction, else none (a scan in id order finds a page of a filter matching many
   *   rows soonest).
   * - PostgreSQL: `ORDERED_SCAN` when every indexed term matches at least `probeCap` rows (read in the
   *   listing's order, no sort), else none (its planner picks the index). Its planner ignores a partial
   *   index's statistics and takes any such filter for a handful of rows: without this it read an option
   *   matching 20% of 100,000 rows through the index and sorted them all for a 100-row page.
   * What the probe found is noted (`noteWalk`): narrow, the next such listing probes first; wide, it walks.
   */
  async hint(...args: Parameters<RowIndexes['hintTerm']>): Promise<string | undefined> {
    return (await this.hintTerm(...args)).index;
  }

  /**
   * `hint`, and with it (SQLite) the filter term whose index it picked because that term narrows the table
   * below `probeCap` rows: a page can then take the ids that term matches from its index alone, sort
   * them, and open only the rows it needs (`listRowTextsAfter`'s `narrowing`).
   */
  async hintTerm(
    baseId: number,
    tableId: string,
    terms: Array<{ key: string; where: Expression<SqlBool> }>,
    sort: { key: string; desc: boolean } | undefined,
    executor: Executor = this.db,
  ): Promise<{ index?: string; narrowing?: Expression<SqlBool> }> {
    if (!this.entries) return {};
    const cap = this.options.probeCap;
    const find = (key: string, kind: IndexKind) =>
      [...this.entries!.values()].find((e) => e.base_id === baseId && e.table_id === tableId && e.column_key === key && e.kind === kind && current(e, this.dialect))?.name;
    const filterKind: IndexKind = this.dialect === 'postgres' ? 'asc' : 'filter';
    let probed = false;
    for (const term of terms) {
      const name = find(term.key, filterKind);
      if (!name) continue;
      probed = true;
      if ((await countThroughIndex(executor, baseId, tableId, name, term.where, cap)) < cap) {
        this.noteWalk(baseId, tableId, terms, false);
        return this.dialect === 'sqlite' ? { index: name, narrowing: term.where } : {};
      }
    }
    if (probed) this.noteWalk(baseId, tableId, terms, true);
    if (this.dialect === 'postgres') return probed ? { index: ORDERED_SCAN } : {};
    const sortIndex = sort ? find(sort.key, sort.desc ? 'desc' : 'asc') : undefined;
    return sortIndex ? { index: sortIndex } : {};
  }

  /**
   * The index of the other direction, to be read backwards (rows/backward-sort-read.ts), for a listing
   * sorted on `column` while its own direction's index is missing (not built yet: the first sort that
   * way builds it in the background). PostgreSQL's `asc` is also its filter index. Undefined when the
   * own index exists, or neither does.
   */
  reverseIndex(baseId: number, tableId: string, column: IndexedColumn, desc: boolean): string | undefined {
    if (!this.entries || !this.options.reverseReads) return undefined;
    const valueType = indexValueType(column);
    if (!valueType) return undefined;
    const find = (kind: IndexKind) =>
      [...this.entries!.values()].find((e) => e.base_id === baseId && e.table_id === tableId && e.column_key === column.key && e.kind === kind && e.value_type === valueType && current(e, this.dialect))?.name;
    if (find(desc ? 'desc' : 'asc')) return undefined;
    return find(desc ? 'asc' : 'desc');
  }

  /** The filter index of a table's column, once built, for SQL grouped statements to read (sql/indexed-groups.ts; off with `groupReads`). */
  filterIndex(baseId: number, tableId: string, key: string): string | undefined {
    if (!this.entries || !this.options.groupReads) return undefined;
    const kind: IndexKind = this.dialect === 'postgres' ? 'asc' : 'filter';
    return [...this.entries.values()].find((e) => e.base_id === baseId && e.table_id === tableId && e.column_key === key && e.kind === kind)?.name;
  }

  /**
   * The row index a walk over every match of `terms` reads as a range (the deadline scans): the first term
   * whose column has a filter index, with the indexed expression to page on by (value, id). Unlike `hint`
   * nothing is probed: the walk reads the whole range anyway, so it costs what the range holds at any size.
   */
  rangeRead(baseId: number, tableId: string, terms: Array<{ key: string; where: Expression<SqlBool> }>): RangeRead | undefined {
    if (!this.entries) return undefined;
    const filterKind: IndexKind = this.dialect === 'postgres' ? 'asc' : 'filter';
    for (const term of terms) {
      const entry = [...this.entries.values()].find((e) => e.base_id === baseId && e.table_id === tableId && e.column_key === term.key && e.kind === filterKind);
      if (!entry) continue;
      const valueType = entry.value_type as ValueType;
      return { index: entry.name, value: indexedValue(this.dialect, sql.ref('base_rows.data'), entry.column_key, valueType), valueType, range: term.where };
    }
    return undefined;
  }

  /** Number of indexes this database has (for /metrics). */
  count(): number {
    return this.entries?.size ?? 0;
  }

  /** Drops the indexes whose table or column is gone or whose value type changed; after structural commits. */
  async reconcile(baseId: number, meta: BaseMetadata | null): Promise<void> {
    await this.idle();
    await this.recoverJumpSets().catch((error) => this.log?.(error, 'jump sets of a crashed build'));
    const entries = [...(await this.load()).values()].filter((e) => e.base_id === baseId);
    for (const entry of entries) {
      const table = meta?.tables.find((t) => t._id === entry.table_id);
      if (table && (entry.kind === POSITION || entry.kind === SEARCH)) continue;
      if (entry.kind === JUMP_SET) {
        // A jump set follows its filter and sort columns (gone, or now of another value type).
        const use = this.jumpSets.get(entry.name)?.use;
        const same = (part: { key: string; valueType: string } | undefined) => {
          const column = part && table?.columns.find((c) => c.key === part.key);
          return !part || (column !== undefined && indexValueType(column) === part.valueType);
        };
        const sameMany = !use?.many || [...use.many.filters, ...use.many.sorts].every((part) => same(part));
        if (!(table && use && same(use.filter) && same(use.sort) && sameMany)) await this.drop(entry);
        continue;
      }
      const spec = manySpec(entry.kind);
      if (spec) {
        // A jump index of several follows every column it carries (gone, or now of another value type).
        const same = ([key, valueType]: [string, ValueType, ...unknown[]]) => {
          const column = table?.columns.find((c) => c.key === key);
          return column !== undefined && indexValueType(column) === valueType;
        };
        if (!(table && spec.f.every(same) && spec.s.every(same))) await this.drop(entry);
        continue;
      }
      const column = table?.columns.find((c) => c.key === entry.column_key);
      // A jump index also follows its sort column (gone, or now a type no index orders).
      const sort = jumpSort(entry.kind);
      const sortColumn = sort ? table?.columns.find((c) => c.key === sort.key) : undefined;
      if (sort && !(sortColumn && indexValueType(sortColumn))) {
        await this.drop(entry);
        continue;
      }
      if (column && indexValueType(column) === entry.value_type && current(entry, this.dialect)) continue;
      await this.drop(entry);
    }
  }

  /**
   * Drops the jump sets a crashed build left (PostgreSQL; jump-sets.ts `recoverJumpSets`: a definition
   * the trigger fills but no read uses). Sets being built, here or by another process, are left alone.
   */
  async recoverJumpSets(): Promise<string[]> {
    if (this.dialect !== 'postgres') return [];
    this.recoverPending = false;
    const dropped = await recoverJumpSets(this.db);
    for (const name of dropped) {
      this.jumpSets.delete(name);
      this.stats.dropped++;
    }
    return dropped;
  }

  /** The first listing after start-up (PostgreSQL): drops what crashed jump-set builds left, in the background. */
  private recoverOnce(): void {
    if (this.recoveryStarted || this.dialect !== 'postgres') return;
    this.recoveryStarted = true;
    void this.recoverJumpSets().catch((error) => this.log?.(error, 'jump sets of a crashed build'));
  }

  private async drain(): Promise<void> {
    await this.load().catch((error) => this.log?.(error, 'row indexes'));
    if (this.recoverPending) await this.recoverJumpSets().catch((error) => this.log?.(error, 'jump sets of a crashed build'));
    await this.pruneGoneBases().catch((error) => this.log?.(error, 'row indexes of deleted bases'));
    await this.pruneStale().catch((error) => this.log?.(error, 'row indexes of an older definition'));
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      try {
        await this.build(next.entry, next.set);
      } catch (error) {
        this.stats.failed++;
        this.log?.(error, `row index ${next.name}`);
      } finally {
        this.queued.delete(next.name);
      }
    }
  }

  private async build(entry: Entry, set?: JumpSetUse): Promise<void> {
    const entries = await this.load();
    if (entries.has(entry.name) || entries.size >= this.options.maxIndexes) return;
    const tableKey = `${entry.base_id}/${entry.table_id}`;
    if (!(await this.bigEnough(entry.base_id, entry.table_id))) {
      this.small.set(tableKey, this.now());
      return;
    }
    this.small.delete(tableKey);
    if (entry.kind === SEARCH) {
      if (!(await this.buildSearch(entry))) return;
    } else if (entry.kind === JUMP_SET) {
      if (!set) return;
      // Registered (below) before the build's lock is released: a set without its entry is a crashed build's.
      const built = await buildJumpSet(this.db, entry.name, entry.base_id, entry.table_id, set, this.listedText(), {
        batchRows: this.options.jumpSetBatch,
        ...(this.onJumpSetBatch ? { afterBatch: this.onJumpSetBatch } : {}),
        register: () => this.register(entry),
      });
      this.jumpSets.set(entry.name, built);
      entries.set(entry.name, entry);
      this.stats.built++;
      return;
    } else if (this.dialect === 'postgres') {
      const ddl = this.createSql(entry);
      // CONCURRENTLY: writers of every base go on while it builds; bounded by a statement timeout.
      await this.db.connection().execute(async (conn) => {
        // Long statements: at 10,000,000 rows a build takes minutes, beyond the client's read timeout too.
        await longStatementTimeout().execute(conn);
        try {
          await longStatement(ddl).execute(conn);
          // Statistics of the indexed expression: PostgreSQL's planner reads none from a partial index and
          // takes a range on the cell for a third of the table (it then scanned 100,000 rows in id order
          // for the 49 a SQL `WHERE Amount > …` matched, 240 ms instead of 0.7 ms through the index).
          const statistics = this.statisticsSql(entry);
          if (statistics) await sql.raw(statistics).execute(conn);
          await longStatement('analyze base_rows').execute(conn);
        } finally {
          await sql`reset statement_timeout`.execute(conn);
        }
      });
    } else {
      await sql.raw(this.createSql(entry)).execute(this.db);
      // Statistics (sampled: a few milliseconds at any size) so the planner knows a table's rows are many
      // and a range on the cell few; without them it takes every equality for a handful of rows.
      await sql`pragma analysis_limit = 1000`.execute(this.db);
      await sql`analyze base_rows`.execute(this.db);
    }
    await this.register(entry);
    entries.set(entry.name, entry);
    this.stats.built++;
    // A table's blocks are counted through its position index: queued once it exists.
    if (entry.kind === POSITION) this.blocks.note(entry.base_id, entry.table_id, { index: entry.name, listed: notArchived(this.dialect) });
  }

  /**
   * A table's trigram index (search-index.ts); false when none can be built (PostgreSQL without pg_trgm).
   * SQLite: the FTS5 table and its triggers in one transaction, then the rows before them copied in
   * batches of `searchBatch`, each a statement of its own so writers and reads go on between them; the
   * entry is registered once it is full, so no read takes a half-filled index.
   */
  private async buildSearch(entry: Entry): Promise<boolean> {
    if (this.dialect === 'sqlite') {
      await this.db.transaction().execute(async (trx) => {
        for (const ddl of sqliteSearchDdl(entry.name, entry.base_id, entry.table_id)) await sql.raw(ddl).execute(trx);
      });
      for (let after: number | undefined = 0; after !== undefined; ) {
        after = await fillSqliteSearch(this.db, entry.name, entry.base_id, entry.table_id, after, this.options.searchBatch);
        await new Promise((resolve) => setImmediate(resolve));
      }
      return true;
    }
    const schema = await trigramSchema(this.db);
    if (!schema) {
      this.noTrigrams = true;
      this.log?.(new Error('pg_trgm is not installed and cannot be created here: contains filters read without a trigram index'), 'search index');
      return false;
    }
    await this.db.connection().execute(async (conn) => {
      await longStatementTimeout().execute(conn);
      try {
        await longStatement(postgresSearchIndexSql(entry.name, scopeText(entry.base_id, entry.table_id), schema)).execute(conn);
        // Statistics of the lowered text (one object for every table's): with them a LIKE of a rare term is
        // estimated rare and read through the index, a common one read in id order; without, every term is
        // taken for 0.5% of the rows.
        await sql.raw(`create statistics if not exists "${SEARCH_STATISTICS}" on (${POSTGRES_SEARCH_TEXT}) from base_rows`).execute(conn);
        await longStatement('analyze base_rows').execute(conn);
      } finally {
        await sql`reset statement_timeout`.execute(conn);
      }
    });
    return true;
  }

  /** An index's `row_indexes` entry. */
  private async register(entry: Entry): Promise<void> {
    const record = { ...entry, created_at: this.now() };
    await this.db.insertInto('row_indexes').values(record).onConflict((oc) => oc.column('name').doNothing()).execute();
  }

  private async drop(entry: Entry): Promise<void> {
    if (entry.kind === JUMP_SET) {
      await dropJumpSet(this.db, entry.name);
      await this.db.deleteFrom('row_indexes').where('name', '=', entry.name).execute();
      this.entries?.delete(entry.name);
      this.jumpSets.delete(entry.name);
      this.stats.dropped++;
      return;
    }
    if (entry.kind === SEARCH) {
      if (this.dialect === 'sqlite') await dropSqliteSearch(this.db, entry.name);
      else await sql.raw(`drop index concurrently if exists "${entry.name}"`).execute(this.db);
      await this.db.deleteFrom('row_indexes').where('name', '=', entry.name).execute();
      this.entries?.delete(entry.name);
      const more = [...(this.entries?.values() ?? [])].some((e) => e.kind === SEARCH);
      if (this.dialect === 'postgres' && !more) await sql.raw(`drop statistics if exists "${SEARCH_STATISTICS}"`).execute(this.db);
      this.stats.dropped++;
      return;
    }
    // A table's blocks go with its position index (they are read and built through it).
    if (entry.kind === POSITION) await this.blocks.drop(entry.base_id, entry.table_id);
    await sql.raw(`drop index ${this.dialect === 'postgres' ? 'concurrently ' : ''}if exists "${entry.name}"`).execute(this.db);
    await this.db.deleteFrom('row_indexes').where('name', '=', entry.name).execute();
    this.entries?.delete(entry.name);
    const sameColumn = [...(this.entries?.values() ?? [])].some((e) => e.base_id === entry.base_id && e.table_id === entry.table_id && e.column_key === entry.column_key && e.kind !== POSITION && e.kind !== JUMP_SET);
    if (this.dialect === 'postgres' && entry.kind !== POSITION && !sameColumn) {
      await sql.raw(`drop statistics if exists "${statisticsName(entry)}"`).execute(this.db);
    }
    this.stats.dropped++;
  }

  /** Drops the indexes of bases that no longer exist (a purged base's rows went with it; its indexes did not). */
  private async pruneGoneBases(): Promise<void> {
    const gone = await this.db
      .selectFrom('row_indexes')
      .select(['name', 'base_id', 'table_id', 'column_key', 'kind', 'value_type'])
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('bases').select('bases.id').whereRef('bases.id', '=', 'row_indexes.base_id'))))
      .execute();
    for (const entry of gone) await this.drop({ ...entry, base_id: Number(entry.base_id) });
  }

  /** Drops the indexes built by an older definition of their kind (their name is not the one built now). */
  private async pruneStale(): Promise<void> {
    for (const entry of [...(await this.load()).values()]) {
      const stale = entry.kind === JUMP_SET ? !this.currentJumpSet(entry) : !current(entry, this.dialect);
      if (stale) await this.drop(entry);
    }
  }

  /** Whether a jump set's entry names a set this code builds (filtered sets built before their keyed index do not). */
  private currentJumpSet(entry: Entry): boolean {
    const set = this.jumpSets.get(entry.name);
    return this.dialect === 'postgres' && set !== undefined && jumpSetName(set.baseId, set.tableId, set.use) === entry.name;
  }

  /** At least `minRows` rows in the table (reads at most that many index entries). */
  private bigEnough(baseId: number, tableId: string): Promise<boolean> {
    return hasRows(this.db, baseId, tableId, this.options.minRows);
  }

  /** PostgreSQL: `CREATE STATISTICS` on a cell index's expression (one per table column), as SQL text. */
  private statisticsSql(entry: Entry): string | undefined {
    if (this.dialect !== 'postgres' || entry.kind === POSITION) return undefined;
    const value = compileText(this.db, indexedValue(this.dialect, sql.ref('data'), entry.column_key, entry.value_type as ValueType));
    return `create statistics if not exists "${statisticsName(entry)}" on (${value}) from base_rows`;
  }

  /** `CREATE INDEX` on the expression of cell-sql.ts, partial on the table, as SQL text. */
  private createSql(entry: Entry): string {
    const concurrently = this.dialect === 'postgres' ? 'concurrently ' : '';
    if (entry.kind === POSITION) {
      // Partial on the listings' own "not archived" term too, so a listing's count never reads a row.
      return `create index ${concurrently}if not exists "${entry.name}" on base_rows (id) where ${scopeText(entry.base_id, entry.table_id)} and ${this.listedText()}`;
    }
    const spec = manySpec(entry.kind);
    if (spec) {
      // A jump index of several (SQLite): the listing's order, the id, then each filter cell and its JSON type; listed rows only.
      const cell = (key: string) => compileText(this.db, indexedValue(this.dialect, sql.ref('data'), key, 'text'));
      const order = spec.s.flatMap(([key, , desc]) => [`(${cell(key)} is null)`, desc ? `${cell(key)} desc` : cell(key)]);
      const filters = spec.f.flatMap(([key]) => [cell(key), compileText(this.db, sqliteType(sql.ref('data'), key))]);
      return `create index if not exists "${entry.name}" on base_rows (${[...order, 'id', ...filters].join(', ')}) where ${scopeText(entry.base_id, entry.table_id)} and ${this.listedText()}`;
    }
    const value = compileText(this.db, indexedValue(this.dialect, sql.ref('data'), entry.column_key, entry.value_type as ValueType));
    const sort = jumpSort(entry.kind);
    if (sort !== null) {
      // A jump index (SQLite): the filter's cell and JSON type (all the filter leaves of that column read),
      // the listing's order (as orderTerms in sort-sql.ts writes it), the id; listed rows only.
      const sortValue = sort && compileText(this.db, indexedValue(this.dialect, sql.ref('data'), sort.key, 'text'));
      const order = sortValue ? [`(${sortValue} is null)`, sort.desc ? `${sortValue} desc` : sortValue] : [];
      const type = compileText(this.db, sqliteType(sql.ref('data'), entry.column_key));
      return `create index if not exists "${entry.name}" on base_rows (${[value, ...order, 'id', type].join(', ')}) where ${scopeText(entry.base_id, entry.table_id)} and ${this.listedText()}`;
    }
    const columns =
      this.dialect === 'postgres'
        ? [`${value} ${entry.kind === 'desc' ? 'desc' : 'asc'} nulls last`, 'id']
        : entry.kind === 'filter'
          ? [value, 'id']
          : [`(${value} is null)`, entry.kind === 'desc' ? `${value} desc` : value, 'id'];
    const listed = listedOnly(this.dialect, entry.kind) ? ` and ${this.listedText()}` : '';
    return `create index ${concurrently}if not exists "${entry.name}" on base_rows (${columns.join(', ')}) where ${scopeText(entry.base_id, entry.table_id)}${listed}`;
  }

  /** The listings' "not archived" term (archived-rows.ts) as SQL text on an unqualified `base_rows`, for a partial index's condition. */
  private listedText(): string {
    return compileText(this.db, sql`${notArchived(this.dialect)}`).replace(/base_rows\./g, '').replace(/"base_rows"\./g, '');
  }

  private load(): Promise<Map<string, Entry>> {
    if (this.entries) return Promise.resolve(this.entries);
    this.loading ??= this.db
      .selectFrom('row_indexes')
      .select(['name', 'base_id', 'table_id', 'column_key', 'kind', 'value_type'])
      .execute()
      .then(async (rows) => {
        if (this.dialect === 'postgres') for (const set of await loadJumpSets(this.db)) this.jumpSets.set(set.name, set);
        this.entries = new Map(rows.map((r) => [r.name, { ...r, base_id: Number(r.base_id) }]));
        // A definition without an entry: a crashed build's, or one under way; the next drain looks (recoverJumpSets).
        if ([...this.jumpSets.keys()].some((name) => !this.entries!.has(name))) {
          this.recoverPending = true;
          this.running ??= this.drain().finally(() => {
            this.running = null;
          });
        }
        return this.entries;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }
}

/** The uses a listing makes: filtered columns (kind `filter`) and sort columns (their direction). */
export function indexUses(table: IndexedTable, roots: Array<ParsedCondition | null>, sorts: Array<{ column: IndexedColumn; desc: boolean }>): IndexUse[] {
  const uses: IndexUse[] = [];
  const byKey = new Map(table.columns.map((c) => [c.key, c]));
  const add = (key: string) => {
    const column = byKey.get(key);
    if (column && !uses.some((u) => u.column === column && u.kind === 'filter')) uses.push({ column, kind: 'filter' });
  };
  const walk = (c: ParsedCondition): void => {
    switch (c.op) {
      case 'and':
      case 'or':
        c.items.forEach(walk);
        return;
      case 'not':
        walk(c.item);
        return;
      case 'numCompare':
      case 'dateKeyRange':
        add(c.key);
        return;
      case 'oneOf':
      case 'dateRule':
        if (c.src.kind === 'cell') add(c.src.key);
        return;
      default:
        return;
    }
  };
  for (const root of roots) if (root) walk(root);
  for (const { column, desc } of sorts.slice(0, 1)) uses.push({ column, kind: desc ? 'desc' : 'asc' });
  return uses;
}

/**
 * SQLite's sort indexes (`asc`, `desc`) hold only listed rows (partial on `notArchived`, as the position
 * index): only listings read them, and they always carry that term, so SQLite knows it holds for every
 * entry and skips the rows before a deep `start` in the index without reading them (the term needs the
 * row's JSON). PostgreSQL's `asc` index is also the filter index, which SQL reads with archived rows, and
 * it reads each row an expression index returns anyway (no index-only scan of an expression).
 */
function listedOnly(dialect: DialectName, kind: string): boolean {
  return dialect === 'sqlite' && (kind === 'asc' || kind === 'desc');
}

/** Whether an index listed in `row_indexes` has the definition this code builds for its use (its name says so). */
function current(entry: Entry, dialect: DialectName): boolean {
  if (entry.kind === POSITION) return true;
  if (entry.kind === SEARCH) return entry.name === RowIndexes.searchName(entry.base_id, entry.table_id);
  if (entry.kind === JUMP_SET) return dialect === 'postgres';
  const spec = manySpec(entry.kind);
  if (spec) return dialect === 'sqlite' && entry.name === RowIndexes.jumpManyName(entry.base_id, entry.table_id, spec);
  const sort = jumpSort(entry.kind);
  if (sort !== null) return dialect === 'sqlite' && entry.name === RowIndexes.jumpName(entry.base_id, entry.table_id, entry.column_key, entry.value_type as ValueType, sort);
  return entry.name === RowIndexes.indexName(entry.base_id, entry.table_id, entry.column_key, entry.kind as IndexKind, entry.value_type as ValueType, dialect);
}

/** The spec of a listing a jump structure of several serves, or undefined when none can (a column no index orders, too many columns). */
function manySpecOf(listing: JumpManyListing): ManySpec | undefined {
  if (listing.filters.length > JUMP_MANY_MAX || listing.sorts.length > JUMP_MANY_MAX) return undefined;
  if (listing.filters.length <= 1 && listing.sorts.length <= 1) return undefined;
  const typed = (column: IndexedColumn): ValueType | undefined => {
    const valueType = indexValueType(column);
    return valueType && indexableKey(column.key) && column.key.length <= MAX_KEY ? valueType : undefined;
  };
  const spec: ManySpec = { f: [], s: [] };
  for (const column of listing.filters) {
    const valueType = typed(column);
    if (!valueType) return undefined;
    spec.f.push([column.key, valueType]);
  }
  for (const { column, desc } of listing.sorts) {
    const valueType = typed(column);
    if (!valueType) return undefined;
    spec.s.push([column.key, valueType, desc]);
  }
  return spec;
}

function scopeText(baseId: number, tableId: string): string {
  return `base_id = ${Number(baseId)} and table_id = '${tableId.replace(/'/g, "''")}'`;
}

function compileText(db: Db, fragment: RawBuilder<unknown>): string {
  const compiled = fragment.compile(db);
  if (compiled.parameters.length > 0) throw new Error('an index expression must have no parameters');
  return compiled.sql;
}

/** The statistics object of a table column's indexed expression (PostgreSQL). */
function statisticsName(entry: Entry): string {
  return `brs_${entry.base_id}_${hex(entry.table_id)}_${hex(entry.column_key)}_${entry.value_type[0]}`;
}

/** Mixed-case ids in lower-case-only names: each character's code in hex keeps them distinct. */
function hex(id: string): string {
  return Buffer.from(id).toString('hex');
}
