import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import { storedCellsOfRows } from './history.repository.js';
import { onPostgres } from './row-index.js';
import type { Cells } from './history.types.js';

/*
 * The stored cells of a page's appended rows (insert-cells.ts). By id, each row is one look-up of the
 * (base, row id) key: on PostgreSQL a page of large appends (50,000 rows) spent 150–290 ms there (the
 * JSON list expanded, a hash join, a spill past work_mem). But one append's rows were inserted
 * together, so their `base_rows.id`s form a range: found from the append's first and last row (two
 * look-ups), read as an index range of the primary key, and returned as one text value parsed once
 * (not 50,000 JSON values through the driver). A range is read only when dense (at most RANGE_SLACK
 * ids per wanted row); what it does not hold (rows deleted, restored under a new id, far apart) is
 * read by id. Either way the result is the by-id one: a range's rows are kept only when wanted, and
 * only the base's (another base's rows may lie in between). SQLite keeps the by-id read (each look-up
 * is in-process; docs/history.md, round 11).
 */

/** A range is read when its length is at most this many times the wanted rows in it. */
export const RANGE_SLACK = 2;

export type CellsRead = 'ranges' | 'ids';

/** `HISTORY_CELLS_READ=ids` forces the by-id read (the bench's A/B switch), read once. */
let mode: CellsRead = process.env.HISTORY_CELLS_READ === 'ids' ? 'ids' : 'ranges';

/** Sets how appended rows' cells are read (the bench alternates both in one run). */
export function setCellsRead(read: CellsRead): void {
  mode = read;
}

/** Rows read so far by range and by id, and the ranges read (the bench and tests check the path taken). */
export const cellsReadCounts = { ranges: 0, rangeRows: 0, byIdRows: 0 };

/** The stored cells of these appends' rows (each append's row ids in their logged order), by row id. */
export async function storedCellsOfAppends(db: Executor, baseId: number, appends: ReadonlyArray<readonly string[]>): Promise<Map<string, Cells>> {
  const rowIds = appends.flat();
  if (mode === 'ids' || !onPostgres(db)) return byId(db, baseId, rowIds);
  const ranges = planRanges(appends, await endIds(db, baseId, appends));
  const cells = await inRanges(db, baseId, ranges, new Set(rowIds));
  const rest = rowIds.filter((id) => !cells.has(id));
  for (const [id, c] of await byId(db, baseId, rest)) cells.set(id, c);
  return cells;
}

async function byId(db: Executor, baseId: number, rowIds: readonly string[]): Promise<Map<string, Cells>> {
  cellsReadCounts.byIdRows += new Set(rowIds).size;
  return storedCellsOfRows(db, baseId, rowIds);
}

/** An id range of `base_rows` and the wanted rows expected in it. */
export interface IdRange {
  lo: number;
  hi: number;
  rows: number;
}

/**
 * Which ranges to read: each append's from its first and last row's ids (`ends`, row id → id; one
 * missing: the other end guessed from the append's length), overlapping or touching ones merged
 * (appends interleaved by several writers are dense only together). From a merged range that is not
 * dense the sparsest append is left out (to be read by id: e.g. its last row restored far away) until
 * what remains is.
 */
export function planRanges(appends: ReadonlyArray<readonly string[]>, ends: ReadonlyMap<string, number>): IdRange[] {
  const spans: IdRange[] = [];
  for (const ids of appends) {
    if (ids.length === 0) continue;
    const first = ends.get(ids[0]!);
    const last = ends.get(ids[ids.length - 1]!);
    if (first === undefined && last === undefined) continue;
    const lo = first ?? last! - (ids.length - 1);
    const hi = last ?? first! + (ids.length - 1);
    spans.push({ lo: Math.min(lo, hi), hi: Math.max(lo, hi), rows: ids.length });
  }
  return denseRanges(spans);
}

function denseRanges(spans: readonly IdRange[]): IdRange[] {
  return merged(spans).flatMap(({ lo, hi, rows, spans: within }) => {
    if (dense({ lo, hi, rows })) return [{ lo, hi, rows }];
    const spread = (r: IdRange) => (r.hi - r.lo + 1) / r.rows;
    const sparsest = within.reduce((a, b) => (spread(b) > spread(a) ? b : a));
    return denseRanges(within.filter((r) => r !== sparsest));
  });
}

const dense = (r: IdRange) => r.hi - r.lo + 1 <= RANGE_SLACK * r.rows;

/** Overlapping or touching ranges merged, with the ranges each holds. */
function merged(ranges: readonly IdRange[]): Array<IdRange & { spans: IdRange[] }> {
  const out: Array<IdRange & { spans: IdRange[] }> = [];
  for (const r of [...ranges].sort((a, b) => a.lo - b.lo)) {
    const top = out[out.length - 1];
    if (top && r.lo <= top.hi + 1) {
      top.hi = Math.max(top.hi, r.hi);
      top.rows += r.rows;
      top.spans.push(r);
    } else out.push({ ...r, spans: [r] });
  }
  return out;
}

/** The `base_rows.id` of each append's first and last row (those stored), one statement. */
async function endIds(db: Executor, baseId: number, appends: ReadonlyArray<readonly string[]>): Promise<Map<string, number>> {
  const ends = [...new Set(appends.flatMap((ids) => (ids.length === 0 ? [] : [ids[0]!, ids[ids.length - 1]!])))];
  const found = await sql<{ row_id: string; id: string }>`SELECT r.row_id, r.id FROM unnest(${ends}::text[]) AS e(row_id)
    CROSS JOIN LATERAL (SELECT row_id, id FROM base_rows WHERE base_id = ${baseId} AND row_id = e.row_id) AS r`.execute(db);
  return new Map(found.rows.map((r) => [r.row_id, Number(r.id)]));
}

/**
 * The wanted rows' cells in these id ranges: one index range of the primary key each, the base's
 * rows only, returned as one text value (`[row id, cells, row id, cells, …]`) parsed once.
 */
async function inRanges(db: Executor, baseId: number, ranges: readonly IdRange[], wanted: ReadonlySet<string>): Promise<Map<string, Cells>> {
  const cells = new Map<string, Cells>();
  if (ranges.length === 0) return cells;
  const found = await sql<{ flat: string | null }>`SELECT string_agg(to_json(r.row_id)::text || ',' || r.data::text, ',') AS flat
    FROM unnest(${ranges.map((r) => r.lo)}::bigint[], ${ranges.map((r) => r.hi)}::bigint[]) AS g(lo, hi)
    CROSS JOIN LATERAL (SELECT row_id, data FROM base_rows WHERE id BETWEEN g.lo AND g.hi AND base_id = ${baseId}) AS r`.execute(db);
  cellsReadCounts.ranges += ranges.length;
  const flat = found.rows[0]?.flat;
  if (!flat) return cells;
  const values = JSON.parse(`[${flat}]`) as unknown[];
  for (let i = 0; i < values.length; i += 2) {
    const rowId = values[i] as string;
    if (wanted.has(rowId)) cells.set(rowId, values[i + 1] as Cells);
  }
  cellsReadCounts.rangeRows += cells.size;
  return cells;
}
