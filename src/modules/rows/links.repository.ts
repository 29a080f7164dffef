import type { Executor } from '../../db/index.js';

const CHUNK = 500;

/** Which end of a link the rows of a table are on: `row_id` for the link's `table_id`, else `other_row_id`. */
export type LinkSide = 'row_id' | 'other_row_id';

export interface LinkPair {
  rowId: string;
  otherRowId: string;
}

/** For each of `rowIds` (on `side`), the ids linked to it in insertion order. */
export async function linkedIds(db: Executor, baseId: number, linkId: string, side: LinkSide, rowIds: string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  const other: LinkSide = side === 'row_id' ? 'other_row_id' : 'row_id';
  const unique = [...new Set(rowIds)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const rows = await db
      .selectFrom('base_links')
      .select(['row_id', 'other_row_id'])
      .where('base_id', '=', baseId)
      .where('link_id', '=', linkId)
      .where(side, 'in', unique.slice(i, i + CHUNK))
      .orderBy('id')
      .execute();
    for (const r of rows) {
      const from = r[side];
      const list = result.get(from) ?? [];
      list.push(r[other]);
      result.set(from, list);
    }
  }
  return result;
}

/** Insert links, skipping pairs that already exist; returns the pairs actually added. */
export async function addLinks(trx: Executor, baseId: number, linkId: string, pairs: LinkPair[], now: number): Promise<LinkPair[]> {
  const added: LinkPair[] = [];
  for (const pair of pairs) {
    const result = await trx
      .insertInto('base_links')
      .values({ base_id: baseId, link_id: linkId, row_id: pair.rowId, other_row_id: pair.otherRowId, ctime: now })
      .onConflict((oc) => oc.columns(['base_id', 'link_id', 'row_id', 'other_row_id']).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) > 0) added.push(pair);
  }
  return added;
}

/** Delete the given links; returns the pairs that existed. */
export async function removeLinks(trx: Executor, baseId: number, linkId: string, pairs: LinkPair[]): Promise<LinkPair[]> {
  const removed: LinkPair[] = [];
  for (const pair of pairs) {
    const result = await trx
      .deleteFrom('base_links')
      .where('base_id', '=', baseId)
      .where('link_id', '=', linkId)
      .where('row_id', '=', pair.rowId)
      .where('other_row_id', '=', pair.otherRowId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) > 0) removed.push(pair);
  }
  return removed;
}

/** Forget every link of deleted rows (either end). */
export async function removeLinksOfRows(trx: Executor, baseId: number, rowIds: string[]): Promise<void> {
  for (let i = 0; i < rowIds.length; i += CHUNK) {
    const part = rowIds.slice(i, i + CHUNK);
    await trx
      .deleteFrom('base_links')
      .where('base_id', '=', baseId)
      .where((eb) => eb.or([eb('row_id', 'in', part), eb('other_row_id', 'in', part)]))
      .execute();
  }
}

export async function removeLinkColumn(trx: Executor, baseId: number, linkId: string): Promise<void> {
  await trx.deleteFrom('base_links').where('base_id', '=', baseId).where('link_id', '=', linkId).execute();
}
