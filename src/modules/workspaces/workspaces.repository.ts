import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import { sha256Hex } from '../../shared/crypto.js';
import { anyBaseListingQuery, baseListingQuery, type BaseListing, type BaseRow, type WorkspaceRow } from '../access/index.js';
import type { ExternalLinksTable } from './workspaces.table.js';

export type ExternalLinkRow = Selectable<ExternalLinksTable>;

export function findPersonalWorkspace(db: Executor, ownerId: number): Promise<WorkspaceRow | undefined> {
  return db
    .selectFrom('workspaces')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('type', '=', 'personal')
    .orderBy('id')
    .executeTakeFirst();
}

export async function insertWorkspace(db: Executor, ownerId: number, now: number): Promise<WorkspaceRow> {
  const row = { owner_id: ownerId, type: 'personal', created_at: now, group_id: null };
  const { id } = await db.insertInto('workspaces').values(row).returning('id').executeTakeFirstOrThrow();
  return { ...row, id: Number(id) };
}

export function listWorkspaceBases(db: Executor, workspaceId: number): Promise<BaseListing[]> {
  return baseListingQuery(db).where('bases.workspace_id', '=', workspaceId).orderBy('bases.id').execute();
}

export function listBasesSharedWith(db: Executor, userId: number) {
  return baseListingQuery(db)
    .innerJoin('base_shares', 'base_shares.base_id', 'bases.id')
    .innerJoin('users as sharer', 'sharer.id', 'workspaces.owner_id')
    .select(['base_shares.permission', 'sharer.virtual_id as from_user', 'sharer.name as from_user_name'])
    .where('base_shares.user_id', '=', userId)
    .orderBy('bases.id')
    .execute();
}

export async function insertBase(db: Executor, row: Omit<BaseRow, 'id' | 'deleted_at' | 'trashed_name'>): Promise<BaseRow> {
  const { id } = await db.insertInto('bases').values(row).returning('id').executeTakeFirstOrThrow();
  return { ...row, id: Number(id), deleted_at: null, trashed_name: null };
}

export async function renameBase(db: Executor, id: number, name: string, modifierId: number, now: number): Promise<void> {
  await db.updateTable('bases').set({ name, modifier_id: modifierId, updated_at: now }).where('id', '=', id).execute();
}

export async function deleteBase(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('bases').where('id', '=', id).execute();
}

export function listShares(db: Executor, baseId: number) {
  return db
    .selectFrom('base_shares')
    .innerJoin('users', 'users.id', 'base_shares.user_id')
    .select(['users.virtual_id', 'users.name', 'users.email', 'base_shares.permission'])
    .where('base_shares.base_id', '=', baseId)
    .orderBy('base_shares.created_at')
    .execute();
}

export async function insertShare(db: Executor, baseId: number, userId: number, permission: string, now: number) {
  await db.insertInto('base_shares').values({ base_id: baseId, user_id: userId, permission, created_at: now }).execute();
}

export async function updateShare(db: Executor, baseId: number, userId: number, permission: string): Promise<boolean> {
  const result = await db
    .updateTable('base_shares')
    .set({ permission })
    .where('base_id', '=', baseId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteShare(db: Executor, baseId: number, userId: number): Promise<boolean> {
  const result = await db.deleteFrom('base_shares').where('base_id', '=', baseId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export function listExternalLinks(db: Executor, baseId: number): Promise<ExternalLinkRow[]> {
  return db.selectFrom('external_links').selectAll().where('base_id', '=', baseId).orderBy('id').execute();
}

/** The link whose token is `token` (compared by its SHA-256, as stored). */
export function findExternalLink(db: Executor, token: string): Promise<ExternalLinkRow | undefined> {
  return db.selectFrom('external_links').selectAll().where('token', '=', sha256Hex(token)).executeTakeFirst();
}

export function findExternalLinkById(db: Executor, id: number): Promise<ExternalLinkRow | undefined> {
  return db.selectFrom('external_links').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertExternalLink(db: Executor, row: Omit<ExternalLinkRow, 'id'>): Promise<ExternalLinkRow> {
  const { id } = await db.insertInto('external_links').values(row).returning('id').executeTakeFirstOrThrow();
  return { ...row, id: Number(id) };
}

export async function deleteExternalLink(db: Executor, baseId: number, token: string): Promise<boolean> {
  const result = await db.deleteFrom('external_links').where('base_id', '=', baseId).where('token', '=', sha256Hex(token)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertMetadata(db: Executor, baseId: number, data: string): Promise<void> {
  await db.insertInto('base_metadata').values({ base_id: baseId, version: 1, data }).execute();
}


/** Is there a row for this base, in the trash or not (its files must stay while it is in the trash)? */
export async function baseRowExists(db: Executor, uuid: string): Promise<boolean> {
  return (await db.selectFrom('bases').select('id').where('uuid', '=', uuid).executeTakeFirst()) !== undefined;
}

/** Moves a base to the trash: its name is kept aside and replaced by a placeholder no user can type. */
export async function trashBase(db: Executor, id: number, now: number): Promise<void> {
  await db
    .updateTable('bases')
    .set((eb) => ({ deleted_at: now, trashed_name: eb.ref('name'), name: `\u0001trash ${id}` }))
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .execute();
}

/**
 * A purge claims a trashed base: `deleted_at` 0 takes it out of the trash listings and restores (it is
 * still deleted everywhere) and makes it the first the retention tick finds, should the purge stop.
 */
export async function claimTrashedBase(db: Executor, id: number): Promise<void> {
  await db.updateTable('bases').set({ deleted_at: 0 }).where('id', '=', id).where('deleted_at', 'is not', null).execute();
}

/** Puts a trashed base back; false when it is no longer in the trash (a purge claimed it meanwhile). */
export async function untrashBase(db: Executor, id: number, name: string): Promise<boolean> {
  const result = await db.updateTable('bases').set({ deleted_at: null, trashed_name: null, name }).where('id', '=', id).where('deleted_at', '>', 0).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Whose trash: a user's personal workspace's, a group's workspace's, or every one (null: the system admin). */
export type TrashScope = { userId: number } | { groupId: number } | null;

/** The trashed bases of `scope`, with their (workspace's) owner's name. */
export function trashedBasesQuery(db: Executor, scope: TrashScope) {
  const query = anyBaseListingQuery(db)
    .innerJoin('users as owner', 'owner.id', 'workspaces.owner_id')
    .select('owner.name as owner_name')
    .where('bases.deleted_at', '>', 0);
  if (scope === null) return query;
  if ('groupId' in scope) return query.where('workspaces.group_id', '=', scope.groupId);
  return query.where('workspaces.owner_id', '=', scope.userId).where('workspaces.group_id', 'is', null);
}

export async function countTrashedBases(db: Executor, scope: TrashScope): Promise<number> {
  let query = db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('bases.deleted_at', '>', 0);
  if (scope !== null && 'groupId' in scope) query = query.where('workspaces.group_id', '=', scope.groupId);
  else if (scope !== null) query = query.where('workspaces.owner_id', '=', scope.userId).where('workspaces.group_id', 'is', null);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Up to `limit` bases trashed before `cutoff`, oldest first. */
export function expiredTrashedBases(db: Executor, cutoff: number, limit: number) {
  return anyBaseListingQuery(db)
    .where('bases.deleted_at', '<', cutoff)
    .orderBy('bases.deleted_at')
    .limit(limit)
    .execute();
}
