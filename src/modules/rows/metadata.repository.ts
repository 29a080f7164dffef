import type { DialectName, Executor } from '../../db/index.js';
import { notFound } from '../../shared/errors.js';
import { parseMetadata, type BaseMetadata } from './metadata.js';

/** The base's metadata document (tables, columns, views). */
export async function loadMetadata(db: Executor, baseId: number): Promise<BaseMetadata> {
  const row = await db.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', baseId).executeTakeFirst();
  if (!row) throw notFound('dtable not found.');
  const meta = parseMetadata(row.data);
  meta.version = row.version;
  return meta;
}

/**
 * The metadata, locked until the transaction ends: every write to a base (rows, links, structure)
 * takes this lock first, so writes to one base are serialized (PostgreSQL `FOR UPDATE`; SQLite has one writer).
 */
export async function lockMetadata(trx: Executor, dialect: DialectName, baseId: number): Promise<BaseMetadata> {
  let query = trx.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', baseId);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('dtable not found.');
  const meta = parseMetadata(row.data);
  meta.version = row.version;
  return meta;
}

/** Store a changed document under the next version. */
export async function saveMetadata(trx: Executor, baseId: number, meta: BaseMetadata): Promise<void> {
  meta.version += 1;
  await trx.updateTable('base_metadata').set({ version: meta.version, data: JSON.stringify(meta) }).where('base_id', '=', baseId).execute();
}
