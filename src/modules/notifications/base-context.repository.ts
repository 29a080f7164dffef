import type { Executor } from '../../db/index.js';
import { usersWithAccess, viewShareUsers, type SharedView } from '../access/index.js';

/** Read-only lookups of other modules' tables that rules need (the base's metadata, members, users). */

export async function metadataTexts(db: Executor, baseIds: number[]): Promise<Map<number, { data: string; version: number }>> {
  if (baseIds.length === 0) return new Map();
  const rows = await db.selectFrom('base_metadata').select(['base_id', 'data', 'version']).where('base_id', 'in', baseIds).execute();
  return new Map(rows.map((r) => [Number(r.base_id), { data: r.data, version: Number(r.version) }]));
}

/** The version of a base's metadata document (bumped only when the structure changes); undefined when the base is gone. */
export async function metadataVersion(db: Executor, baseId: number): Promise<number | undefined> {
  const row = await db.selectFrom('base_metadata').select('version').where('base_id', '=', baseId).executeTakeFirst();
  return row === undefined ? undefined : Number(row.version);
}

export interface MemberRow {
  base_id: number;
  user_id: number;
  virtual_id: string;
  name: string;
  /** Set for a user who reaches the base through view shares only: the views they see. */
  views?: SharedView[];
}

/**
 * Active users with access to each base (who counts is `access`'s `usersWithAccess`: owner, shares,
 * groups), then the users who reach it through view shares only, with their views.
 */
export async function membersOf(db: Executor, baseIds: number[]): Promise<MemberRow[]> {
  const [full, viewOnly] = await Promise.all([usersWithAccess(db, baseIds), viewShareUsers(db, baseIds)]);
  const access: Array<{ base_id: number; user_id: number; views?: SharedView[] }> = [...full];
  const whole = new Set(full.map((a) => `${a.base_id}:${a.user_id}`));
  const limited = new Map<string, { base_id: number; user_id: number; views: SharedView[] }>();
  for (const v of viewOnly) {
    const key = `${v.base_id}:${v.user_id}`;
    if (whole.has(key)) continue;
    let entry = limited.get(key);
    if (!entry) limited.set(key, (entry = { base_id: v.base_id, user_id: v.user_id, views: [] }));
    entry.views.push({ table: v.table_id, view: v.view_id });
  }
  access.push(...limited.values());
  if (access.length === 0) return [];
  const users = await db
    .selectFrom('users')
    .select(['id', 'virtual_id', 'name'])
    .where('id', 'in', [...new Set(access.map((a) => a.user_id))])
    .where('is_active', '=', 1)
    .execute();
  const byId = new Map(users.map((u) => [Number(u.id), u]));
  return access.flatMap((a) => {
    const u = byId.get(a.user_id);
    return u ? [{ base_id: a.base_id, user_id: a.user_id, virtual_id: u.virtual_id, name: u.name, ...(a.views ? { views: a.views } : {}) }] : [];
  });
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
