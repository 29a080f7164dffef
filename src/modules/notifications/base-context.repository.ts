import type { Executor } from '../../db/index.js';

/** Read-only lookups of other modules' tables that rules need (the base's metadata, members, users). */

export async function metadataTexts(db: Executor, baseIds: number[]): Promise<Map<number, { data: string; version: number }>> {
  if (baseIds.length === 0) return new Map();
  const rows = await db.selectFrom('base_metadata').select(['base_id', 'data', 'version']).where('base_id', 'in', baseIds).execute();
  return new Map(rows.map((r) => [Number(r.base_id), { data: r.data, version: Number(r.version) }]));
}

export interface MemberRow {
  base_id: number;
  user_id: number;
  virtual_id: string;
  name: string;
}

/** Active users with access to each base: the workspace owner and everyone the base is shared with. */
export async function membersOf(db: Executor, baseIds: number[]): Promise<MemberRow[]> {
  if (baseIds.length === 0) return [];
  const owners = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .innerJoin('users', 'users.id', 'workspaces.owner_id')
    .select(['bases.id as base_id', 'users.id as user_id', 'users.virtual_id', 'users.name'])
    .where('bases.id', 'in', baseIds)
    .where('users.is_active', '=', 1)
    .execute();
  const shared = await db
    .selectFrom('base_shares')
    .innerJoin('users', 'users.id', 'base_shares.user_id')
    .select(['base_shares.base_id', 'users.id as user_id', 'users.virtual_id', 'users.name'])
    .where('base_shares.base_id', 'in', baseIds)
    .where('users.is_active', '=', 1)
    .execute();
  return [...owners, ...shared].map((r) => ({ base_id: Number(r.base_id), user_id: Number(r.user_id), virtual_id: r.virtual_id, name: r.name }));
}

export interface BaseInfo {
  id: number;
  uuid: string;
  name: string;
  workspace_id: number;
}

export async function baseInfo(db: Executor, baseId: number): Promise<BaseInfo | undefined> {
  const row = await db.selectFrom('bases').select(['id', 'uuid', 'name', 'workspace_id']).where('id', '=', baseId).executeTakeFirst();
  return row && { id: Number(row.id), uuid: row.uuid, name: row.name, workspace_id: Number(row.workspace_id) };
}

export interface UserInfo {
  id: number;
  virtual_id: string;
  email: string;
  name: string;
  email_notification: number;
  is_active: number;
}

const USER_INFO = ['id', 'virtual_id', 'email', 'name', 'email_notification', 'is_active'] as const;

export async function userByVirtualId(db: Executor, virtualId: string): Promise<UserInfo | undefined> {
  return db.selectFrom('users').select(USER_INFO).where('virtual_id', '=', virtualId).executeTakeFirst();
}

export async function userById(db: Executor, id: number): Promise<UserInfo | undefined> {
  return db.selectFrom('users').select(USER_INFO).where('id', '=', id).executeTakeFirst();
}
