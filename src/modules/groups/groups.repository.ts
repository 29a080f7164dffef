import { sql, type Selectable } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { baseListingQuery, type BaseListing } from '../access/index.js';
import type { GroupsTable } from './groups.table.js';

// Groups, their members and their workspaces. Reads and writes; access decisions come from `access`.

export type GroupRow = Selectable<GroupsTable>;

export interface MemberRow {
  group_id: number;
  user_id: number;
  is_admin: number;
  virtual_id: string;
  name: string;
  email: string;
  owner_id: number;
}

const num = (v: unknown) => Number(v);

function toGroup(row: GroupRow): GroupRow {
  return { ...row, id: num(row.id), owner_id: num(row.owner_id), created_at: num(row.created_at) };
}

export async function findGroup(db: Executor, id: number): Promise<GroupRow | undefined> {
  const row = await db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toGroup(row);
}

/**
 * Locks the groups `userId` owns and their workspaces until the transaction ends (PostgreSQL; SQLite
 * runs one writing transaction at a time). A base or member being added to one of them holds a key-share
 * lock on its workspace or group through the foreign key: this waits for it to commit (and then sees
 * it), or it waits for this transaction (and then finds its group gone).
 */
export async function lockGroupsOwnedBy(trx: Executor, dialect: DialectName, userId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select id from groups where owner_id = ${userId} order by id for update`.execute(trx);
  await sql`select id from workspaces where group_id in (select id from groups where owner_id = ${userId}) order by id for update`.execute(trx);
}

/**
 * Names of the groups `userId` owns that others use: whose workspace holds bases (trashed ones included)
 * or that have members besides the owner. Deleting the owner would take them from everyone (cascade).
 */
export async function groupsInUseOwnedBy(db: Executor, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('groups')
    .select('groups.name')
    .where('groups.owner_id', '=', userId)
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('group_members').select('group_members.user_id').whereRef('group_members.group_id', '=', 'groups.id').where('group_members.user_id', '<>', userId)),
        eb.exists(eb.selectFrom('bases').innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id').select('bases.id').whereRef('workspaces.group_id', '=', 'groups.id')),
      ]),
    )
    .orderBy('groups.id')
    .execute();
  return rows.map((r) => r.name);
}

/** The groups `userId` is a member of, oldest first. */
export async function listGroupsOf(db: Executor, userId: number): Promise<GroupRow[]> {
  const rows = await db
    .selectFrom('groups')
    .innerJoin('group_members', 'group_members.group_id', 'groups.id')
    .selectAll('groups')
    .where('group_members.user_id', '=', userId)
    .orderBy('groups.id')
    .execute();
  return rows.map(toGroup);
}

/** Every group (admin listing), optionally those whose name contains `name`. */
export async function listAllGroups(db: Executor, offset: number, limit: number, name?: string): Promise<GroupRow[]> {
  let q = db.selectFrom('groups').selectAll();
  if (name) q = q.where(sql<boolean>`lower(name) like ${`%${escapeLike(name.toLowerCase())}%`} escape '\\'`);
  const rows = await q.orderBy('id').offset(offset).limit(limit).execute();
  return rows.map(toGroup);
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function insertGroup(db: Executor, name: string, ownerId: number, now: number): Promise<GroupRow> {
  const { id } = await db.insertInto('groups').values({ name, owner_id: ownerId, created_at: now }).returning('id').executeTakeFirstOrThrow();
  const groupId = num(id);
  await db.insertInto('group_members').values({ group_id: groupId, user_id: ownerId, is_admin: 1, created_at: now }).execute();
  await db.insertInto('workspaces').values({ owner_id: ownerId, type: 'group', group_id: groupId, created_at: now }).execute();
  return { id: groupId, name, owner_id: ownerId, created_at: now };
}

export async function renameGroup(db: Executor, id: number, name: string): Promise<void> {
  await db.updateTable('groups').set({ name }).where('id', '=', id).execute();
}

/** A new owner: the group's row, its workspace's owner (the owner of its bases) and the new owner's admin flag. */
export async function transferGroup(db: Executor, id: number, newOwnerId: number): Promise<void> {
  await db.updateTable('groups').set({ owner_id: newOwnerId }).where('id', '=', id).execute();
  await db.updateTable('workspaces').set({ owner_id: newOwnerId }).where('group_id', '=', id).execute();
  await db.updateTable('group_members').set({ is_admin: 1 }).where('group_id', '=', id).where('user_id', '=', newOwnerId).execute();
}

/** Deletes the group, its workspace (with any bases left in it, trashed ones included) and, by cascade, its members and shares. */
export async function deleteGroup(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('workspaces').where('group_id', '=', id).execute();
  await db.deleteFrom('groups').where('id', '=', id).execute();
}

export async function findGroupWorkspace(db: Executor, groupId: number) {
  const row = await db.selectFrom('workspaces').selectAll().where('group_id', '=', groupId).executeTakeFirst();
  return row && { ...row, id: num(row.id), owner_id: num(row.owner_id), group_id: groupId };
}

/** The live (not trashed) bases in a group's workspace. */
export function listGroupBases(db: Executor, groupId: number): Promise<BaseListing[]> {
  return baseListingQuery(db).where('workspaces.group_id', '=', groupId).orderBy('bases.id').execute();
}

/** How many bases (trashed ones included) the group's workspace holds. */
export async function countGroupBases(db: Executor, groupId: number): Promise<number> {
  const row = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('workspaces.group_id', '=', groupId)
    .where('bases.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return num(row.n);
}

function membersQuery(db: Executor) {
  return db
    .selectFrom('group_members')
    .innerJoin('users', 'users.id', 'group_members.user_id')
    .innerJoin('groups', 'groups.id', 'group_members.group_id')
    .select([
      'group_members.group_id',
      'group_members.user_id',
      'group_members.is_admin',
      'users.virtual_id',
      'users.name',
      'users.email',
      'groups.owner_id',
    ]);
}

function toMember(row: MemberRow): MemberRow {
  return { ...row, group_id: num(row.group_id), user_id: num(row.user_id), is_admin: num(row.is_admin), owner_id: num(row.owner_id) };
}

export async function listMembers(db: Executor, groupId: number, limit = 10_000): Promise<MemberRow[]> {
  const rows = await membersQuery(db).where('group_members.group_id', '=', groupId).orderBy('group_members.created_at').orderBy('group_members.user_id').limit(limit).execute();
  return rows.map(toMember);
}

/** Members whose name, e-mail or virtual id contains `q` (case-sensitive, as the original's API); a group is bounded by GROUP_MAX_MEMBERS. */
export async function searchMembers(db: Executor, groupId: number, q: string, limit: number): Promise<MemberRow[]> {
  const all = await listMembers(db, groupId);
  return all.filter((m) => m.name.includes(q) || m.email.includes(q) || m.virtual_id.includes(q)).slice(0, limit);
}

export async function findMember(db: Executor, groupId: number, userId: number): Promise<MemberRow | undefined> {
  const row = await membersQuery(db).where('group_members.group_id', '=', groupId).where('group_members.user_id', '=', userId).executeTakeFirst();
  return row && toMember(row);
}

export async function countMembers(db: Executor, groupId: number): Promise<number> {
  const row = await db
    .selectFrom('group_members')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('group_id', '=', groupId)
    .executeTakeFirstOrThrow();
  return num(row.n);
}

export async function insertMember(db: Executor, groupId: number, userId: number, now: number): Promise<void> {
  await db.insertInto('group_members').values({ group_id: groupId, user_id: userId, is_admin: 0, created_at: now }).execute();
}

export async function setMemberAdmin(db: Executor, groupId: number, userId: number, isAdmin: boolean): Promise<void> {
  await db.updateTable('group_members').set({ is_admin: isAdmin ? 1 : 0 }).where('group_id', '=', groupId).where('user_id', '=', userId).execute();
}

export async function deleteMember(db: Executor, groupId: number, userId: number): Promise<boolean> {
  const result = await db.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
  return num(result.numDeletedRows) > 0;
}

/** Ids of a group's members. */
export async function memberIds(db: Executor, groupId: number): Promise<number[]> {
  const rows = await db.selectFrom('group_members').select('user_id').where('group_id', '=', groupId).execute();
  return rows.map((r) => num(r.user_id));
}

/** Whether `userId` is already in a group named `name`. */
export async function userHasGroupNamed(db: Executor, userId: number, name: string, exceptId?: number): Promise<boolean> {
  let q = db
    .selectFrom('groups')
    .innerJoin('group_members', 'group_members.group_id', 'groups.id')
    .select('groups.id')
    .where('group_members.user_id', '=', userId)
    .where('groups.name', '=', name);
  if (exceptId !== undefined) q = q.where('groups.id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}
