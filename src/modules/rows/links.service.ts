import { badRequest, notFound } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { displayColumn, linkEnds, type LinkColumnData } from './link-cells.js';
import { addLinks, linkedIds, removeLinks, type LinkPair, type LinkSide } from './links.repository.js';
import { findColumn, findTable, lookupTable, type BaseMetadata, type ColumnMeta, type TableMeta } from './metadata.js';
import { displayText } from './present.js';
import { recomputeLinkFormulas } from './link-formula-columns.js';
import { linkEvent } from './row-events.js';
import { columnsBeyond, refuseBeyondScope } from './scope-columns.js';
import { findRows, findRowsInBase } from './rows.repository.js';
import { linkIdOf } from './structure.js';
import type { Db } from '../../db/index.js';

type Body = Record<string, unknown>;

/** Link pairs one call may name. */
export const MAX_LINK_PAIRS = 10_000;
const QUERY_LINKS_MAX_ROWS = 1000;
const QUERY_LINKS_DEFAULT_LIMIT = 10;
const QUERY_LINKS_MAX_LIMIT = 100;

export type LinkMode = 'add' | 'replace' | 'remove';
type Mode = LinkMode;

interface ResolvedLink {
  linkId: string;
  data: LinkColumnData;
  /** True when the client's `table` is the link's `other_table_id` side. */
  flipped: boolean;
  sourceTable: TableMeta;
  targetTable: TableMeta;
}

/** Links between rows (POST add, PUT replace, DELETE remove) and `query-links`. */
export class LinksService {
  constructor(
    private readonly db: Db,
    private readonly writer: BaseWriter,
  ) {}

  async change(base: BaseRef, actor: Actor, body: Body, mode: Mode) {
    const removed = await this.writer.write(base, actor, (w) => changeLinksIn(w, this.writer.timeZone, body, mode));
    return mode === 'remove' ? { success: true as const, deleted_links_count: removed } : { success: true as const };
  }

  /** `scopeTables`: a table-scoped token's; a link column to a table outside them is refused, naming it. */
  async query(base: BaseRef, body: Body, scopeTables?: readonly string[]) {
    const meta = await this.writer.read(base);
    const table = findTable(meta, body);
    const column = findColumn(table, body.link_column_key ?? body.link_column_name ?? body.link_column);
    if (column.type !== 'link') throw badRequest(`column ${column.name} is not a link column.`);
    refuseBeyondScope(columnsBeyond(scopeTables, meta.tables, table), [column.key]);
    if (!Array.isArray(body.rows) || body.rows.length > QUERY_LINKS_MAX_ROWS) throw badRequest('rows invalid.');
    const requests = body.rows.map((r, i) => {
      if (typeof r !== 'object' || r === null || typeof (r as Body).row_id !== 'string') throw badRequest(`rows.${i} invalid.`);
      const { row_id, offset = 0, limit = QUERY_LINKS_DEFAULT_LIMIT } = r as { row_id: string; offset?: unknown; limit?: unknown };
      if (!Number.isInteger(offset) || (offset as number) < 0) throw badRequest(`rows.${i}.offset invalid.`);
      if (!Number.isInteger(limit) || (limit as number) < 1) throw badRequest(`rows.${i}.limit invalid.`);
      return { rowId: row_id, offset: offset as number, limit: Math.min(limit as number, QUERY_LINKS_MAX_LIMIT) };
    });
    const ends = linkEnds(table, column);
    const linked = await linkedIds(this.db, base.id, ends.linkId, ends.side, requests.map((r) => r.rowId));
    const pages = new Map(requests.map((r) => [r.rowId, (linked.get(r.rowId) ?? []).slice(r.offset, r.offset + r.limit)]));
    const others = await findRows(this.db, base.id, ends.otherTableId, [...pages.values()].flat());
    const display = displayColumn(meta.tables.find((t) => t._id === ends.otherTableId), column);
    const result: Record<string, Array<{ row_id: string; display_value: string }>> = {};
    for (const [rowId, ids] of pages) {
      result[rowId] = ids.filter((id) => others.has(id)).map((id) => ({ row_id: id, display_value: displayText(display, others.get(id)!) }));
    }
    return result;
  }
}

type Snapshot = Partial<Record<LinkSide, Map<string, string[]>>>;

/**
 * Adds, replaces or removes links inside a write (the links endpoints, and automations' `link_records`
 * in their run's transaction): link events for every row whose link cell changed, link formulas
 * recomputed. Answers how many links were removed.
 */
export async function changeLinksIn(w: WriteScope, timeZone: string, body: Body, mode: LinkMode): Promise<number> {
  const map = readMap(body);
  const base = w.base;
  const link = resolveLink(w.meta, body);
  await assertRowsExist(w, link, map);
  const ends = endsOf(w.meta, link);
  const sourceSide: LinkSide = link.flipped ? 'other_row_id' : 'row_id';
  const current = mode === 'replace' ? await linkedIds(w.trx, base.id, link.linkId, sourceSide, [...map.keys()]) : new Map<string, string[]>();
  const affected = affectedRows(link, map, ends, current);
  const before = await snapshot(w, link.linkId, affected);
  let count = 0;
  for (const [sourceId, targetIds] of map) {
    const pairs = targetIds.map((t) => orient(link, sourceId, t));
    if (mode === 'add') {
      await addLinks(w.trx, base.id, link.linkId, pairs, w.now);
    } else if (mode === 'remove') {
      count += (await removeLinks(w.trx, base.id, link.linkId, pairs)).length;
    } else {
      const stale = (current.get(sourceId) ?? []).filter((t) => !targetIds.includes(t)).map((t) => orient(link, sourceId, t));
      await removeLinks(w.trx, base.id, link.linkId, stale);
      await addLinks(w.trx, base.id, link.linkId, pairs, w.now);
    }
  }
  const after = await snapshot(w, link.linkId, affected);
  await emitChanges(w, ends, before, after);
  for (const [side, end] of ends) {
    const changed = [...(after[side]?.keys() ?? [])].filter((id) => !sameSet(before[side]?.get(id) ?? [], after[side]?.get(id) ?? []));
    await recomputeLinkFormulas(w, timeZone, end.table, changed);
  }
  return count;
}

async function emitChanges(w: WriteScope, ends: Map<LinkSide, { table: TableMeta; column: ColumnMeta }>, before: Snapshot, after: Snapshot) {
  for (const [side, end] of ends) {
    const ids = [...(after[side]?.keys() ?? [])].filter((id) => !sameSet(before[side]?.get(id) ?? [], after[side]?.get(id) ?? []));
    if (ids.length === 0) continue;
    const rows = await findRows(w.trx, w.base.id, end.table._id, ids);
    for (const id of ids) {
      const row = rows.get(id);
      if (row) w.emit([linkEvent(w.base, end.table, row, end.column, before[side]?.get(id) ?? [], after[side]?.get(id) ?? [], w.actor, w.now)]);
    }
  }
}

function readMap(body: Body): Map<string, string[]> {
  let raw = body.other_rows_ids_map;
  if (raw === undefined && typeof body.table_row_id === 'string' && typeof body.other_table_row_id === 'string') {
    raw = { [body.table_row_id]: [body.other_table_row_id] };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('other_rows_ids_map invalid.');
  const map = new Map<string, string[]>();
  let pairs = 0;
  for (const [rowId, others] of Object.entries(raw as Body)) {
    if (!Array.isArray(others) || !others.every((o) => typeof o === 'string')) throw badRequest('other_rows_ids_map invalid.');
    const unique = [...new Set(others as string[])];
    pairs += Math.max(unique.length, 1);
    map.set(rowId, unique);
  }
  if (pairs > MAX_LINK_PAIRS) throw badRequest(`Number of links exceeds ${MAX_LINK_PAIRS}.`);
  return map;
}

function resolveLink(meta: BaseMetadata, body: Body): ResolvedLink {
  if (typeof body.link_id !== 'string' || body.link_id === '') throw badRequest('link_id invalid.');
  const column = meta.tables.flatMap((t) => t.columns).find((c) => linkIdOf(c) === body.link_id);
  if (!column) throw notFound(`link ${body.link_id} not found`);
  const data = column.data as unknown as LinkColumnData;
  const source = lookupTable(meta, { table_name: body.table_name, table_id: body.table_id });
  const target = lookupTable(meta, { table_name: body.other_table_name, table_id: body.other_table_id });
  if (!source) throw notFound('table not found');
  if (!target) throw notFound('other table not found');
  if (source._id === data.table_id && target._id === data.other_table_id) return { linkId: data.link_id, data, flipped: false, sourceTable: source, targetTable: target };
  if (source._id === data.other_table_id && target._id === data.table_id) return { linkId: data.link_id, data, flipped: true, sourceTable: source, targetTable: target };
  throw badRequest('table and other table do not belong to this link.');
}

function orient(link: ResolvedLink, sourceId: string, targetId: string): LinkPair {
  return link.flipped ? { rowId: targetId, otherRowId: sourceId } : { rowId: sourceId, otherRowId: targetId };
}

async function assertRowsExist(w: WriteScope, link: ResolvedLink, map: Map<string, string[]>): Promise<void> {
  const ids = [...map.keys(), ...[...map.values()].flat()];
  const found = await findRowsInBase(w.trx, w.base.id, ids);
  for (const id of map.keys()) if (found.get(id)?.tableId !== link.sourceTable._id) throw notFound(`row ${id} not found`);
  for (const id of [...map.values()].flat()) if (found.get(id)?.tableId !== link.targetTable._id) throw notFound(`row ${id} not found`);
}

/** The link column of each end (a self-link has one column, on the `row_id` end). */
function endsOf(meta: BaseMetadata, link: ResolvedLink): Map<LinkSide, { table: TableMeta; column: ColumnMeta }> {
  const ends = new Map<LinkSide, { table: TableMeta; column: ColumnMeta }>();
  const columnIn = (tableId: string) => {
    const table = meta.tables.find((t) => t._id === tableId);
    const column = table?.columns.find((c) => linkIdOf(c) === link.linkId);
    return table && column ? { table, column } : undefined;
  };
  const left = columnIn(link.data.table_id);
  if (left) ends.set('row_id', left);
  if (link.data.other_table_id !== link.data.table_id) {
    const right = columnIn(link.data.other_table_id);
    if (right) ends.set('other_row_id', right);
  }
  return ends;
}

/** Rows whose link cell may change: the named rows, their named targets and (for PUT) their current targets. */
function affectedRows(link: ResolvedLink, map: Map<string, string[]>, ends: Map<LinkSide, unknown>, current: Map<string, string[]>): Map<LinkSide, Set<string>> {
  const sources = new Set(map.keys());
  const targets = new Set([...map.values(), ...current.values()].flat());
  const result = new Map<LinkSide, Set<string>>();
  const left = link.flipped ? targets : sources;
  const right = link.flipped ? sources : targets;
  if (ends.has('row_id')) result.set('row_id', link.data.table_id === link.data.other_table_id ? new Set([...left, ...right]) : left);
  if (ends.has('other_row_id')) result.set('other_row_id', right);
  return result;
}

/** Linked ids of every affected row, per end. */
async function snapshot(w: WriteScope, linkId: string, affected: Map<LinkSide, Set<string>>): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const [side, ids] of affected) {
    const linked = await linkedIds(w.trx, w.base.id, linkId, side, [...ids]);
    out[side] = new Map([...ids].map((id) => [id, linked.get(id) ?? []]));
  }
  return out;
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
