import { sql, type Selectable } from 'kysely';
import { baseRevisionSql, type Executor } from '../../db/index.js';
import type { BaseSnapshotsTable } from './history.table.js';

export type SnapshotInfo = Omit<Selectable<BaseSnapshotsTable>, 'archive'>;
const INFO = ['id', 'base_id', 'commit_id', 'created_at', 'revision', 'base_name', 'size'] as const;

const info = (r: SnapshotInfo): SnapshotInfo => ({ ...r, id: Number(r.id), base_id: Number(r.base_id), created_at: Number(r.created_at), revision: Number(r.revision), size: Number(r.size) });

export async function insertSnapshot(db: Executor, values: Omit<Selectable<BaseSnapshotsTable>, 'id'>): Promise<number> {
  const row = await db.insertInto('base_snapshots').values(values).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function lastSnapshot(db: Executor, baseId: number): Promise<SnapshotInfo | undefined> {
  const row = await db.selectFrom('base_snapshots').select(INFO).where('base_id', '=', baseId).orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
  return row ? info(row) : undefined;
}

export async function listSnapshots(db: Executor, baseId: number, limit: number, offset: number): Promise<SnapshotInfo[]> {
  const rows = await db.selectFrom('base_snapshots').select(INFO).where('base_id', '=', baseId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return rows.map(info);
}

export async function findSnapshotArchive(db: Executor, baseId: number, commitId: string): Promise<(SnapshotInfo & { archive: Buffer }) | undefined> {
  const row = await db.selectFrom('base_snapshots').select([...INFO, 'archive']).where('base_id', '=', baseId).where('commit_id', '=', commitId).executeTakeFirst();
  return row ? { ...info(row), archive: Buffer.from(row.archive) } : undefined;
}

/** The base's current revision (every committed write bumps it). */
export async function currentRevision(db: Executor, baseId: number): Promise<number | undefined> {
  const row = await db.selectFrom('base_metadata').select(baseRevisionSql(db).as('revision')).where('base_id', '=', baseId).executeTakeFirst();
  return row ? Number(row.revision) : undefined;
}

/** Up to `limit` bases (not in the trash) changed since their last snapshot, after base id `after`. */
export async function changedBases(db: Executor, after: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('bases')
    .innerJoin('base_metadata', 'base_metadata.base_id', 'bases.id')
    .select('bases.id')
    .where('bases.deleted_at', 'is', null)
    .where('bases.id', '>', after)
    .where(sql<boolean>`${baseRevisionSql(db)} > coalesce((select max(s.revision) from base_snapshots s where s.base_id = bases.id), -1)`)
    .orderBy('bases.id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** Snapshots older than `before`, oldest first, `limit` at a time after id `after` (the tiered retention). */
export async function olderSnapshots(db: Executor, before: number, afterId: number, limit: number): Promise<Array<{ id: number; base_id: number; created_at: number }>> {
  const rows = await db
    .selectFrom('base_snapshots')
    .select(['id', 'base_id', 'created_at'])
    .where('created_at', '<', before)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), base_id: Number(r.base_id), created_at: Number(r.created_at) }));
}

export async function deleteSnapshots(db: Executor, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) await db.deleteFrom('base_snapshots').where('id', 'in', ids.slice(i, i + 500)).execute();
}
