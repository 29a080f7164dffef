import type { Executor } from '../../db/index.js';
import { baseListingQuery } from '../access/index.js';

// Bases shared with groups and views shared with users or groups.

export async function listGroupShares(db: Executor, baseId: number) {
  const rows = await db
    .selectFrom('base_group_shares')
    .innerJoin('groups', 'groups.id', 'base_group_shares.group_id')
    .select(['base_group_shares.group_id', 'groups.name as group_name', 'base_group_shares.permission'])
    .where('base_group_shares.base_id', '=', baseId)
    .orderBy('base_group_shares.created_at')
    .orderBy('base_group_shares.group_id')
    .execute();
  return rows.map((r) => ({ ...r, group_id: Number(r.group_id) }));
}

export async function insertGroupShare(db: Executor, baseId: number, groupId: number, permission: string, now: number): Promise<void> {
  await db.insertInto('base_group_shares').values({ base_id: baseId, group_id: groupId, permission, created_at: now }).execute();
}

export async function updateGroupShare(db: Executor, baseId: number, groupId: number, permission: string): Promise<boolean> {
  const r = await db.updateTable('base_group_shares').set({ permission }).where('base_id', '=', baseId).where('group_id', '=', groupId).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function deleteGroupShare(db: Executor, baseId: number, groupId: number): Promise<boolean> {
  const r = await db.deleteFrom('base_group_shares').where('base_id', '=', baseId).where('group_id', '=', groupId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Bases shared with (or held by) the groups of a user, per group id. */
export function listBasesOfUsersGroups(db: Executor, userId: number) {
  const shared = baseListingQuery(db)
    .innerJoin('base_group_shares', 'base_group_shares.base_id', 'bases.id')
    .innerJoin('group_members', 'group_members.group_id', 'base_group_shares.group_id')
    .select(['base_group_shares.group_id as shared_group_id', 'base_group_shares.permission'])
    .where('group_members.user_id', '=', userId)
    .orderBy('bases.id')
    .execute();
  return shared;
}

export interface ViewShareListing {
  id: number;
  base_id: number;
  table_id: string;
  view_id: string;
  permission: string;
  shared_name: string | null;
  to_user_id: number | null;
  to_group_id: number | null;
  dtable_name: string;
  workspace_id: number;
  from_user: string;
  from_user_name: string;
  to_user: string | null;
  to_user_name: string | null;
  to_group_name: string | null;
}

function viewSharesQuery(db: Executor) {
  return db
    .selectFrom('view_shares')
    .innerJoin('bases', 'bases.id', 'view_shares.base_id')
    .innerJoin('users as sharer', 'sharer.id', 'view_shares.from_user_id')
    .leftJoin('users as recipient', 'recipient.id', 'view_shares.to_user_id')
    .leftJoin('groups', 'groups.id', 'view_shares.to_group_id')
    .select([
      'view_shares.id',
      'view_shares.base_id',
      'view_shares.table_id',
      'view_shares.view_id',
      'view_shares.permission',
      'view_shares.shared_name',
      'view_shares.to_user_id',
      'view_shares.to_group_id',
      'bases.name as dtable_name',
      'bases.workspace_id',
      'sharer.virtual_id as from_user',
      'sharer.name as from_user_name',
      'recipient.virtual_id as to_user',
      'recipient.name as to_user_name',
      'groups.name as to_group_name',
    ])
    .where('bases.deleted_at', 'is', null);
}

function toListing(r: Record<string, unknown>): ViewShareListing {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return { ...(r as unknown as ViewShareListing), id: Number(r.id), base_id: Number(r.base_id), workspace_id: Number(r.workspace_id), to_user_id: n(r.to_user_id), to_group_id: n(r.to_group_id) };
}

export async function listViewSharesOfBase(db: Executor, baseId: number, kind: 'user' | 'group', view?: { tableId: string; viewId: string }) {
  let q = viewSharesQuery(db).where('view_shares.base_id', '=', baseId).where(kind === 'user' ? 'view_shares.to_user_id' : 'view_shares.to_group_id', 'is not', null);
  if (view) q = q.where('view_shares.table_id', '=', view.tableId).where('view_shares.view_id', '=', view.viewId);
  return (await q.orderBy('view_shares.id').execute()).map(toListing);
}

export async function findViewShare(db: Executor, id: number, baseId: number, kind: 'user' | 'group'): Promise<ViewShareListing | undefined> {
  const row = await viewSharesQuery(db)
    .where('view_shares.id', '=', id)
    .where('view_shares.base_id', '=', baseId)
    .where(kind === 'user' ? 'view_shares.to_user_id' : 'view_shares.to_group_id', 'is not', null)
    .executeTakeFirst();
  return row && toListing(row);
}

/** Views shared with a user directly. */
export async function listViewSharesToUser(db: Executor, userId: number) {
  return (await viewSharesQuery(db).where('view_shares.to_user_id', '=', userId).orderBy('view_shares.id').execute()).map(toListing);
}

/** Views shared with the groups of a user. */
export async function listViewSharesToUsersGroups(db: Executor, userId: number) {
  const rows = await viewSharesQuery(db)
    .innerJoin('group_members', 'group_members.group_id', 'view_shares.to_group_id')
    .where('group_members.user_id', '=', userId)
    .orderBy('view_shares.id')
    .execute();
  return rows.map(toListing);
}

export async function insertViewShare(
  db: Executor,
  row: { base_id: number; table_id: string; view_id: string; permission: string; from_user_id: number; to_user_id: number | null; to_group_id: number | null; shared_name: string | null; created_at: number },
): Promise<number> {
  const { id } = await db.insertInto('view_shares').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateViewShare(db: Executor, id: number, permission: string, sharedName: string | null | undefined): Promise<void> {
  await db
    .updateTable('view_shares')
    .set(sharedName === undefined ? { permission } : { permission, shared_name: sharedName })
    .where('id', '=', id)
    .execute();
}

export async function deleteViewShare(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('view_shares').where('id', '=', id).execute();
}
