import { sql } from 'kysely';
import type { Db, Executor } from '../../db/index.js';

export interface ArchivedRow {
  table_id: string;
  row_id: string;
  data: string;
  ctime: number;
  mtime: number;
  creator: string;
  last_modifier: string;
}

export interface ArchivedLink {
  link_id: string;
  row_id: string;
  other_row_id: string;
  ctime: number;
}

const text = (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data));

export async function readMetadata(db: Db, baseId: number): Promise<string | undefined> {
  const row = await db.selectFrom('base_metadata').select('data').where('base_id', '=', baseId).executeTakeFirst();
  return row ? text(row.data) : undefined;
}

/**
 * A base's stored rows of tables `tableIds` (its metadata's: not a trashed table's kept rows, nor an
 * import's staged rows), 1000 at a time in insertion order (keyset paging).
 */
export async function* scanBaseRows(db: Db, baseId: number, tableIds: string[]): AsyncGenerator<ArchivedRow[]> {
  if (tableIds.length === 0) return;
  for (let after = 0; ; ) {
    const page = await db
      .selectFrom('base_rows')
      .select(['id', 'table_id', 'row_id', 'data', 'ctime', 'mtime', 'creator', 'last_modifier'])
      .where('base_id', '=', baseId)
      .where('id', '>', after)
      .where('table_id', 'in', tableIds)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (page.length === 0) return;
    after = Number(page[page.length - 1]!.id);
    yield page.map(({ id: _id, data, ctime, mtime, ...r }) => ({ ...r, data: text(data), ctime: Number(ctime), mtime: Number(mtime) }));
  }
}

/** A base's stored links of link ids `linkIds` (its metadata's link columns), 1000 at a time in insertion order. */
export async function* scanBaseLinks(db: Db, baseId: number, linkIds: string[]): AsyncGenerator<ArchivedLink[]> {
  if (linkIds.length === 0) return;
  for (let after = 0; ; ) {
    const page = await db
      .selectFrom('base_links')
      .select(['id', 'link_id', 'row_id', 'other_row_id', 'ctime'])
      .where('base_id', '=', baseId)
      .where('id', '>', after)
      .where('link_id', 'in', linkIds)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (page.length === 0) return;
    after = Number(page[page.length - 1]!.id);
    yield page.map(({ id: _id, ctime, ...l }) => ({ ...l, ctime: Number(ctime) }));
  }
}

/** Replaces a (new, blank) base's structure and rows inside the caller's transaction. */
export async function replaceContent(trx: Executor, baseId: number, metadata: string): Promise<void> {
  await trx.deleteFrom('base_links').where('base_id', '=', baseId).execute();
  await trx.deleteFrom('base_rows').where('base_id', '=', baseId).execute();
  // Version and revision move on, so no cache keeps the blank base's structure (rows/read-metadata.ts, base-snapshots.ts).
  await trx
    .updateTable('base_metadata')
    .set({ data: metadata, version: sql<number>`version + 1`, revision: sql<number>`revision + 1` })
    .where('base_id', '=', baseId)
    .execute();
}

export async function insertArchivedRows(trx: Executor, baseId: number, rows: ArchivedRow[]): Promise<void> {
  if (rows.length > 0) await trx.insertInto('base_rows').values(rows.map((r) => ({ ...r, base_id: baseId }))).execute();
}

export async function insertArchivedLinks(trx: Executor, baseId: number, links: ArchivedLink[]): Promise<void> {
  if (links.length > 0) await trx.insertInto('base_links').values(links.map((l) => ({ ...l, base_id: baseId }))).execute();
}
