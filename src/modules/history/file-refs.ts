import { CompiledQuery, sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import { parseChanges } from './changes-codec.js';
import type { LoggedChange } from './history.types.js';
import { collectAssetPaths } from './snapshot-files.js';
import { onPostgres } from './row-index.js';

/*
 * The files the operation log can put back, recorded at write time (migration 0045): an entry
 * (base, path, operation) for each file an operation's kept values name — a changed cell's old value,
 * a deleted row's cells (`b`), what a restore sets back. A trashed table's purge reads only the
 * entries of its own candidate files and the operations they point to, so its work follows what the
 * table touched, not the log's length. `operation_log_files_from.from_id`: every operation from that
 * id on has its entries; older ones (a log from before the migration) are walked as before
 * (logged-files.ts) until the backfill tick below has moved the mark down to 1.
 */

/** Entries' paths per statement, operations read per statement. */
const BATCH = 500;
/** Operations the backfill reads per step. */
export const BACKFILL_BATCH = 1000;

const SQLITE_INSERT = 'INSERT OR IGNORE INTO operation_log_files (base_id, path, op_id) SELECT ?, value, ? FROM json_each(?)';

/**
 * The files the kept values of these changes name (empty for nearly every write). `stored`: the
 * operation's changes as stored; when uncompressed and without `/asset/`, no value names a file.
 */
export function filesOfChanges(rows: ReadonlyArray<Pick<LoggedChange, 'b'>>, stored: string): string[] {
  if (!stored.startsWith('z:') && !stored.includes('/asset/')) return [];
  const found = new Set<string>();
  for (const change of rows) if (change.b) collectAssetPaths(JSON.stringify(change.b), found);
  return [...found];
}

/** Records an operation's files (SQLite; on PostgreSQL they travel in the write's statement, operation-log.ts). */
export async function recordFilesSqlite(db: Executor, baseId: number, opId: number, paths: readonly string[]): Promise<void> {
  if (paths.length > 0) await db.executeQuery(CompiledQuery.raw(SQLITE_INSERT, [baseId, opId, JSON.stringify(paths)]));
}

/** The id from which every operation has its file entries. */
export async function filesRecordedFrom(db: Executor): Promise<number> {
  const row = (await sql<{ from_id: number | string }>`SELECT from_id FROM operation_log_files_from WHERE id = 1`.execute(db)).rows[0];
  return row === undefined ? 1 : Number(row.from_id);
}

/**
 * Which of `paths` a value the log can put back still names, among the operations with entries
 * (id >= filesRecordedFrom): each path's entries, then those operations, read again to confirm (a row
 * purged from the trash lost its values; rows of `purgedTableId` cannot come back once it is purged).
 * Work in proportion to the entries of these paths, whatever the log's length.
 */
export async function filesNamedByRefs(db: Executor, baseId: number, purgedTableId: string, paths: readonly string[]): Promise<Set<string>> {
  const named = new Set<string>();
  const wanted = new Set(paths);
  const opIds = new Set<number>();
  const list = [...wanted];
  for (let i = 0; i < list.length; i += BATCH) {
    const chunk = JSON.stringify(list.slice(i, i + BATCH));
    const query = onPostgres(db)
      ? sql<{ op_id: string }>`SELECT f.op_id FROM json_array_elements_text(${chunk}::json) AS p(path)
          CROSS JOIN LATERAL (SELECT op_id FROM operation_log_files WHERE base_id = ${baseId} AND path = p.path) AS f`
      : sql<{ op_id: number }>`SELECT f.op_id FROM json_each(${chunk}) AS p CROSS JOIN operation_log_files AS f WHERE f.base_id = ${baseId} AND f.path = p.value`;
    for (const r of (await query.execute(db)).rows) opIds.add(Number(r.op_id));
  }
  const ids = [...opIds].sort((a, b) => b - a);
  for (let i = 0; i < ids.length && named.size < wanted.size; i += BATCH) {
    const ops = await db.selectFrom('operation_log').select(['id', 'changes']).where('base_id', '=', baseId).where('id', 'in', ids.slice(i, i + BATCH)).execute();
    for (const op of ops) namedIn(op.changes, purgedTableId, wanted, named);
  }
  return named;
}

/** Adds to `named` the `wanted` paths the kept values of one stored operation name (not those of `purgedTableId`'s rows, nor of purged rows). */
export function namedIn(stored: string, purgedTableId: string, wanted: ReadonlySet<string>, named: Set<string>): void {
  for (const change of parseChanges(stored).rows) {
    if (change.x || change.t === purgedTableId || !change.b) continue;
    const found = new Set<string>();
    collectAssetPaths(JSON.stringify(change.b), found);
    for (const path of found) if (wanted.has(path)) named.add(path);
  }
}

/** Deletes the entries of these operations (pruned): their paths are read from their changes. */
export async function forgetFiles(db: Executor, ops: ReadonlyArray<{ id: number; base_id: number; changes: string }>): Promise<void> {
  for (const op of ops) {
    const paths = filesOfChanges(parseChanges(op.changes).rows, op.changes);
    if (paths.length > 0) {
      await sql`DELETE FROM operation_log_files WHERE base_id = ${op.base_id} AND op_id = ${op.id} AND path IN (${sql.join(paths)})`.execute(db);
    }
  }
}

/** A purged base's entries, `batch` per statement. */
export async function purgeBaseFiles(db: Executor, baseId: number, batch: number): Promise<void> {
  for (;;) {
    const result = await sql`DELETE FROM operation_log_files WHERE (base_id, path, op_id) IN (
      SELECT base_id, path, op_id FROM operation_log_files WHERE base_id = ${baseId} LIMIT ${batch})`.execute(db);
    if (Number(result.numAffectedRows ?? 0) < batch) break;
  }
}

/**
 * One step of the backfill of a log from before the entries (the tick): the entries of the operations
 * just below the mark that may name a file, and the mark moved down past them, in one transaction (a
 * step that stops changes nothing; entries are written once). Returns the mark (1: done).
 */
export async function backfillFiles(db: Executor, batch = BACKFILL_BATCH): Promise<number> {
  const from = await filesRecordedFrom(db);
  if (from <= 1) return 1;
  // Newest first below the mark, only operations whose text may name a file (or is compressed).
  const ops = await db
    .selectFrom('operation_log')
    .select(['id', 'base_id', 'changes'])
    .where('id', '<', from)
    .where((eb) => eb.or([eb('changes', 'like', '%/asset/%'), eb('changes', 'like', 'z:%')]))
    .orderBy('id', 'desc')
    .limit(batch)
    .execute();
  // Fewer than a batch: every operation below the mark was read.
  const mark = ops.length < batch ? 1 : Number(ops[ops.length - 1]!.id);
  await db.transaction().execute(async (trx) => {
    for (const op of ops) {
      const paths = filesOfChanges(parseChanges(op.changes).rows, op.changes);
      if (paths.length === 0) continue;
      if (onPostgres(trx)) {
        await sql`INSERT INTO operation_log_files (base_id, path, op_id) SELECT ${Number(op.base_id)}, p, ${Number(op.id)} FROM json_array_elements_text(${JSON.stringify(paths)}::json) AS p ON CONFLICT DO NOTHING`.execute(trx);
      } else await recordFilesSqlite(trx, Number(op.base_id), Number(op.id), paths);
    }
    await sql`UPDATE operation_log_files_from SET from_id = ${mark} WHERE id = 1 AND from_id > ${mark}`.execute(trx);
  });
  return mark;
}
