import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { KeptFile } from '../assets/index.js';

/** Marks a blob as used now; false when there is no such blob (it must be stored). */
export async function touchBlob(db: Executor, sha256: string, now: number): Promise<boolean> {
  const result = await db.updateTable('snapshot_blobs').set({ used_at: now }).where('sha256', '=', sha256).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function recordBlob(db: Executor, sha256: string, size: number, now: number): Promise<void> {
  await db
    .insertInto('snapshot_blobs')
    .values({ sha256, size, used_at: now })
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ used_at: now }))
    .execute();
}

export async function insertSnapshotFiles(db: Executor, snapshotId: number, files: KeptFile[]): Promise<void> {
  for (let i = 0; i < files.length; i += 500) {
    const part = files.slice(i, i + 500).map((f) => ({ snapshot_id: snapshotId, path: f.path, sha256: f.sha256, size: f.size, modified: f.modified }));
    if (part.length > 0) await db.insertInto('snapshot_files').values(part).execute();
  }
}

/** A snapshot's files, in the order they were kept. */
export async function snapshotFiles(db: Executor, snapshotId: number): Promise<KeptFile[]> {
  const rows = await db.selectFrom('snapshot_files').select(['path', 'sha256', 'size', 'modified']).where('snapshot_id', '=', snapshotId).orderBy('id').execute();
  return rows.map((r) => ({ path: r.path, sha256: r.sha256, size: Number(r.size), modified: Number(r.modified) }));
}

/** Blobs no snapshot holds and none took since `before`, `limit` at a time (garbage collection). */
export async function unusedBlobs(db: Executor, before: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('snapshot_blobs')
    .select('sha256')
    .where('used_at', '<', before)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('snapshot_files').select(sql`1`.as('one')).whereRef('snapshot_files.sha256', '=', 'snapshot_blobs.sha256'))))
    .orderBy('used_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.sha256);
}

export async function deleteBlobRecord(db: Executor, sha256: string): Promise<void> {
  await db.deleteFrom('snapshot_blobs').where('sha256', '=', sha256).execute();
}
