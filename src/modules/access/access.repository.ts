import type { Selectable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';

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
    .select(['workspaces.owner_id', 'creator.name as creator_name', 'modifier.name as modifier_name']);
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

/** Ids of the bases shared with a user, and uuids of the bases in the user's own workspaces. */
export async function basesOfUser(db: Executor, userId: number): Promise<UserBases> {
  const shared = await db.selectFrom('base_shares').select('base_id').where('user_id', '=', userId).execute();
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
  creator_name: string;
  modifier_name: string;
}

/** The owner of a base (the owner of its workspace), or undefined for an unknown base. */
export async function findBaseOwnerId(db: Executor, baseId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select('workspaces.owner_id')
    .where('bases.id', '=', baseId)
    .where('bases.deleted_at', 'is', null)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.owner_id);
}
