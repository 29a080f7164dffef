import type { Selectable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';
import { isSharePermission, type GroupRole, type SharePermission } from './policy.js';

// The facts access decisions are made from: a workspace, a base (with its owner), a user's share.
// Reads only; the workspaces module writes these tables.

export type WorkspaceRow = Selectable<Database['workspaces']>;
export type BaseRow = Selectable<Database['bases']>;

export function findWorkspace(db: Executor, id: number): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Bases with their owner and names, the trashed ones included (the trash lists them). */
export function anyBaseListingQuery(db: Executor) {
  return db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .innerJoin('users as creator', 'creator.id', 'bases.creator_id')
    .innerJoin('users as modifier', 'modifier.id', 'bases.modifier_id')
    .selectAll('bases')
    .select(['workspaces.owner_id', 'workspaces.group_id', 'creator.name as creator_name', 'modifier.name as modifier_name']);
}

export function baseListingQuery(db: Executor) {
  // A base in the trash answers as a deleted one on every path that finds bases through here.
  return anyBaseListingQuery(db).where('bases.deleted_at', 'is', null);
}

export function findBase(db: Executor, workspaceId: number, name: string): Promise<BaseListing | undefined> {
  return baseListingQuery(db).where('bases.workspace_id', '=', workspaceId).where('bases.name', '=', name).executeTakeFirst();
}

export function findBaseByUuid(db: Executor, uuid: string): Promise<BaseListing | undefined> {
  return baseListingQuery(db).where('bases.uuid', '=', uuid).executeTakeFirst();
}

export async function findShare(db: Executor, baseId: number, userId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('base_shares')
    .select('permission')
    .where('base_id', '=', baseId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.permission;
}

export function findBaseById(db: Executor, id: number): Promise<BaseListing | undefined> {
  return baseListingQuery(db).where('bases.id', '=', id).executeTakeFirst();
}

/** The user's role in a group, or null when not a member. */
export async function findGroupRole(db: Executor, groupId: number, userId: number): Promise<GroupRole | null> {
  const row = await db
    .selectFrom('group_members')
    .innerJoin('groups', 'groups.id', 'group_members.group_id')
    .select(['groups.owner_id', 'group_members.is_admin'])
    .where('group_members.group_id', '=', groupId)
    .where('group_members.user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return null;
  if (Number(row.owner_id) === userId) return 'owner';
  return Number(row.is_admin) === 1 ? 'admin' : 'member';
}

/** The facts about a (non-owner) user on a base beyond ownership: own share, group role, shares to the user's groups. */
export interface UserBaseFacts {
  share: SharePermission | null;
  groupRole: GroupRole | null;
  groupShares: SharePermission[];
}

export async function userBaseFacts(db: Executor, baseId: number, groupId: number | null, userId: number): Promise<UserBaseFacts> {
  const [share, groupRole, groupShares] = await Promise.all([
    findShare(db, baseId, userId),
    groupId === null ? Promise.resolve(null) : findGroupRole(db, groupId, userId),
    db
      .selectFrom('base_group_shares')
      .innerJoin('group_members', 'group_members.group_id', 'base_group_shares.group_id')
      .select('base_group_shares.permission')
      .where('base_group_shares.base_id', '=', baseId)
      .where('group_members.user_id', '=', userId)
      .execute(),
  ]);
  return {
    share: isSharePermission(share) ? share : null,
    groupRole,
    groupShares: groupShares.map((r) => r.permission).filter(isSharePermission),
  };
}

/** A view shared with a user, directly (`to_user_id`) or through one of the user's groups. */
export interface ViewShareRow {
  id: number;
  base_id: number;
  table_id: string;
  view_id: string;
  permission: string;
  to_user_id: number | null;
  to_group_id: number | null;
}

/** The view share `id` of `kind` on a base, if it reaches `userId` (as its recipient or a member of its group). */
export async function findViewShareFor(db: Executor, kind: 'user' | 'group', id: number, baseId: number, userId: number): Promise<ViewShareRow | undefined> {
  let query = db
    .selectFrom('view_shares')
    .select(['view_shares.id', 'view_shares.base_id', 'view_shares.table_id', 'view_shares.view_id', 'view_shares.permission', 'view_shares.to_user_id', 'view_shares.to_group_id'])
    .where('view_shares.id', '=', id)
    .where('view_shares.base_id', '=', baseId);
  query =
    kind === 'user'
      ? query.where('view_shares.to_user_id', '=', userId)
      : query
          .innerJoin('group_members', 'group_members.group_id', 'view_shares.to_group_id')
          .where('group_members.user_id', '=', userId);
  const row = await query.executeTakeFirst();
  return row && { ...row, id: Number(row.id), base_id: Number(row.base_id), to_user_id: row.to_user_id === null ? null : Number(row.to_user_id), to_group_id: row.to_group_id === null ? null : Number(row.to_group_id) };
}

/** Ids of every base a group reaches: those in its workspace, those shared with it, those with a view shared with it. */
export async function basesOfGroup(db: Executor, groupId: number): Promise<number[]> {
  const [own, shared, views] = await Promise.all([
    db.selectFrom('bases').innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id').select('bases.id').where('workspaces.group_id', '=', groupId).execute(),
    db.selectFrom('base_group_shares').select('base_id as id').where('group_id', '=', groupId).execute(),
    db.selectFrom('view_shares').select('base_id as id').where('to_group_id', '=', groupId).execute(),
  ]);
  return [...new Set([...own, ...shared, ...views].map((r) => Number(r.id)))];
}

/** Ids of the bases shared with a user (directly, through groups, by group workspace, by view share), and uuids of the bases in the user's own workspaces. */
export async function basesOfUser(db: Executor, userId: number): Promise<UserBases> {
  const direct = await db.selectFrom('base_shares').select('base_id').where('user_id', '=', userId).execute();
  const viewShared = await db.selectFrom('view_shares').select('base_id').where('to_user_id', '=', userId).execute();
  const groups = await db.selectFrom('group_members').select('group_id').where('user_id', '=', userId).execute();
  const throughGroups: number[] = [];
  for (const g of groups) throughGroups.push(...(await basesOfGroup(db, Number(g.group_id))));
  const shared = [...new Set([...direct, ...viewShared].map((r) => Number(r.base_id)).concat(throughGroups))].map((base_id) => ({ base_id }));
  const owned = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select(['bases.id', 'bases.uuid'])
    .where('workspaces.owner_id', '=', userId)
    .where('bases.deleted_at', 'is', null)
    .execute();
  return { sharedBaseIds: shared.map((r) => Number(r.base_id)), owned: owned.map((r) => ({ id: Number(r.id), uuid: r.uuid })) };
}

/** The bases shared with a user, and those in the user's own workspaces. */
export interface UserBases {
  sharedBaseIds: number[];
  owned: Array<{ id: number; uuid: string }>;
}

/** A base with the names the API shows next to it. */
export interface BaseListing extends BaseRow {
  owner_id: number;
  /** The group whose workspace holds the base; null in a personal workspace. */
  group_id: number | null;
  creator_name: string;
  modifier_name: string;
}

/** The owner of a base (the owner of its workspace) and its workspace's group, or undefined for an unknown base. */
export async function findBaseOwner(db: Executor, baseId: number): Promise<{ ownerId: number; groupId: number | null } | undefined> {
  const row = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select(['workspaces.owner_id', 'workspaces.group_id'])
    .where('bases.id', '=', baseId)
    .where('bases.deleted_at', 'is', null)
    .executeTakeFirst();
  return row === undefined ? undefined : { ownerId: Number(row.owner_id), groupId: row.group_id === null ? null : Number(row.group_id) };
}

/**
 * Who has access to each base (the users a rule may notify, the base's related users): the workspace's
 * owner, users it is shared with, members of the group whose workspace holds it, members of groups it
 * is shared with. View-share recipients are not among them (they see one view, not the base). Active
 * users only; one entry per base and user, the owner first, then in the order of those sources.
 */
export async function usersWithAccess(db: Executor, baseIds: readonly number[]): Promise<Array<{ base_id: number; user_id: number }>> {
  if (baseIds.length === 0) return [];
  const ids = [...baseIds];
  const [owners, shared, inGroup, groupShared] = await Promise.all([
    db
      .selectFrom('bases')
      .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
      .select(['bases.id as base_id', 'workspaces.owner_id as user_id'])
      .where('bases.id', 'in', ids)
      .execute(),
    db.selectFrom('base_shares').select(['base_id', 'user_id']).where('base_id', 'in', ids).orderBy('created_at').orderBy('user_id').execute(),
    db
      .selectFrom('bases')
      .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
      .innerJoin('group_members', 'group_members.group_id', 'workspaces.group_id')
      .select(['bases.id as base_id', 'group_members.user_id'])
      .where('bases.id', 'in', ids)
      .orderBy('group_members.created_at')
      .orderBy('group_members.user_id')
      .execute(),
    db
      .selectFrom('base_group_shares')
      .innerJoin('group_members', 'group_members.group_id', 'base_group_shares.group_id')
      .select(['base_group_shares.base_id', 'group_members.user_id'])
      .where('base_group_shares.base_id', 'in', ids)
      .orderBy('base_group_shares.created_at')
      .orderBy('group_members.user_id')
      .execute(),
  ]);
  const seen = new Set<string>();
  const out: Array<{ base_id: number; user_id: number }> = [];
  for (const r of [...owners, ...shared, ...inGroup, ...groupShared]) {
    const entry = { base_id: Number(r.base_id), user_id: Number(r.user_id) };
    const key = `${entry.base_id}:${entry.user_id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}

/**
 * The users who reach each base through view shares only count separately from `usersWithAccess`: one
 * entry per base, user and shared view (a user's own view shares and those of groups they are in).
 */
export async function viewShareUsers(db: Executor, baseIds: readonly number[]): Promise<Array<{ base_id: number; user_id: number; table_id: string; view_id: string }>> {
  if (baseIds.length === 0) return [];
  const ids = [...baseIds];
  const [own, viaGroups] = await Promise.all([
    db
      .selectFrom('view_shares')
      .select(['base_id', 'to_user_id as user_id', 'table_id', 'view_id'])
      .where('base_id', 'in', ids)
      .where('to_user_id', 'is not', null)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('view_shares')
      .innerJoin('group_members', 'group_members.group_id', 'view_shares.to_group_id')
      .select(['view_shares.base_id', 'group_members.user_id', 'view_shares.table_id', 'view_shares.view_id'])
      .where('view_shares.base_id', 'in', ids)
      .orderBy('view_shares.id')
      .orderBy('group_members.user_id')
      .execute(),
  ]);
  return [...own, ...viaGroups].map((r) => ({ base_id: Number(r.base_id), user_id: Number(r.user_id), table_id: r.table_id, view_id: r.view_id }));
}
