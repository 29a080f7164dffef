import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';

/** Is any row stored under `tableId` in the base (a live table's, or a trashed table's kept rows)? */
export async function anyRowUnder(db: Executor, baseId: number, tableId: string): Promise<boolean> {
  const row = await db.selectFrom('base_rows').select('id').where('base_id', '=', baseId).where('table_id', '=', tableId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Is any link stored under `linkId` in the base? */
export async function anyLinkUnder(db: Executor, baseId: number, linkId: string): Promise<boolean> {
  const row = await db.selectFrom('base_links').select('id').where('base_id', '=', baseId).where('link_id', '=', linkId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The highest row id stored now (a purge deletes no row stored after it started). */
export async function maxRowId(db: Executor): Promise<number> {
  const row = await db.selectFrom('base_rows').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}

export async function maxLinkId(db: Executor): Promise<number> {
  const row = await db.selectFrom('base_links').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}

/**
 * Deletes up to `batch` rows stored under `tableId` (ids up to `upTo`) in one short statement; returns
 * the deleted rows' cells as JSON text.
 */
export async function deleteRowsUnder(db: Executor, baseId: number, tableId: string, upTo: number, batch: number): Promise<string[]> {
  const rows = await db
    .selectFrom('base_rows')
    .select(['id', 'data'])
    .where('base_id', '=', baseId)
    .where('table_id', '=', tableId)
    .where('id', '<=', upTo)
    .orderBy('id')
    .limit(batch)
    .execute();
  if (rows.length === 0) return [];
  await db.deleteFrom('base_rows').where('id', 'in', rows.map((r) => Number(r.id))).execute();
  return rows.map((r) => (typeof r.data === 'string' ? r.data : JSON.stringify(r.data)));
}

/** Deletes up to `batch` links stored under `linkId` (ids up to `upTo`) in one short statement; how many. */
export async function deleteLinksUnder(db: Executor, baseId: number, linkId: string, upTo: number, batch: number): Promise<number> {
  const ids = await db.selectFrom('base_links').select('id').where('base_id', '=', baseId).where('link_id', '=', linkId).where('id', '<=', upTo).limit(batch).execute();
  if (ids.length === 0) return 0;
  await db.deleteFrom('base_links').where('id', 'in', ids.map((r) => Number(r.id))).execute();
  return ids.length;
}

/** Where a page of stored rows ended: the next page starts after it. */
export interface CellsCursor {
  tableId: string;
  id: number;
}

/**
 * One page of a base's stored rows (of every table, live or kept, or of `tableId` only), in the order of
 * the (base, table, id) index after `after`: their cells as JSON text, and where the page ended.
 */
export async function storedCellsPage(db: Executor, baseId: number, tableId: string | undefined, after: CellsCursor | undefined, limit: number): Promise<{ cells: string[]; last?: CellsCursor }> {
  let query = db.selectFrom('base_rows').select(['table_id', 'id', 'data']).where('base_id', '=', baseId);
  if (tableId !== undefined) query = query.where('table_id', '=', tableId);
  if (after) query = query.where(sql<boolean>`(table_id > ${after.tableId} OR (table_id = ${after.tableId} AND id > ${after.id}))`);
  const rows = await query.orderBy('table_id').orderBy('id').limit(limit).execute();
  const end = rows[rows.length - 1];
  return {
    cells: rows.map((r) => (typeof r.data === 'string' ? r.data : JSON.stringify(r.data))),
    ...(end ? { last: { tableId: end.table_id, id: Number(end.id) } } : {}),
  };
}

/** Deletes up to `batch` of a base's rows (any table) in one short statement; how many. */
export async function deleteBaseRows(db: Executor, baseId: number, batch: number): Promise<number> {
  const ids = await db.selectFrom('base_rows').select('id').where('base_id', '=', baseId).limit(batch).execute();
  if (ids.length > 0) await db.deleteFrom('base_rows').where('id', 'in', ids.map((r) => Number(r.id))).execute();
  return ids.length;
}

/** Deletes up to `batch` of a base's links in one short statement; how many. */
export async function deleteBaseLinks(db: Executor, baseId: number, batch: number): Promise<number> {
  const ids = await db.selectFrom('base_links').select('id').where('base_id', '=', baseId).limit(batch).execute();
  if (ids.length > 0) await db.deleteFrom('base_links').where('id', 'in', ids.map((r) => Number(r.id))).execute();
  return ids.length;
}
