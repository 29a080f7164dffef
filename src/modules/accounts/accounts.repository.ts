import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { UsersTable } from './accounts.table.js';

export type UserRow = Selectable<UsersTable>;

export function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A user by contact e-mail (case-insensitive) or by virtual id. */
export function findUserByLogin(db: Executor, login: string): Promise<UserRow | undefined> {
  const value = login.trim().toLowerCase();
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb('email', '=', value), eb('virtual_id', '=', value)]))
    .executeTakeFirst();
}

export function findUsersByVirtualIds(db: Executor, ids: readonly string[]): Promise<UserRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('users').selectAll().where('virtual_id', 'in', ids).execute();
}

export async function insertUser(
  db: Executor,
  user: Omit<UserRow, 'id'>,
): Promise<UserRow> {
  const { id } = await db.insertInto('users').values(user).returning('id').executeTakeFirstOrThrow();
  return { ...user, id: Number(id) };
}

export async function updateUser(
  db: Executor,
  id: number,
  changes: Partial<Pick<UserRow, 'name' | 'email_notification' | 'is_staff' | 'is_active' | 'password_hash'>>,
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

export async function deleteUser(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

export async function countUsers(db: Executor): Promise<number> {
  const { n } = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

export function listUsers(db: Executor, offset: number, limit: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('id').offset(offset).limit(limit).execute();
}

export function findTokenSalt(db: Executor, userId: number): Promise<{ token_salt: string } | undefined> {
  return db.selectFrom('account_tokens').select('token_salt').where('user_id', '=', userId).executeTakeFirst();
}

export async function insertAccountToken(
  db: Executor,
  row: { user_id: number; token_hash: string; token_salt: string; created_at: number },
): Promise<void> {
  await db.insertInto('account_tokens').values(row).onConflict((oc) => oc.column('user_id').doNothing()).execute();
}

/** Signs the user out everywhere: the default Account-Token and every device's. */
export async function deleteAccountToken(db: Executor, userId: number): Promise<void> {
  await db.deleteFrom('account_tokens').where('user_id', '=', userId).execute();
  await db.deleteFrom('account_devices').where('user_id', '=', userId).execute();
}

/** A user as a request's credential sees them: with the two-factor flags (force, enrolled). */
export type SignedInUserRow = UserRow & { force_2fa: number | null; two_factor_enabled: number | null };

export function findUserByTokenHash(db: Executor, tokenHash: string): Promise<SignedInUserRow | undefined> {
  return db
    .selectFrom('account_tokens')
    .innerJoin('users', 'users.id', 'account_tokens.user_id')
    .leftJoin('user_two_factor', 'user_two_factor.user_id', 'users.id')
    .selectAll('users')
    .select(['user_two_factor.force_2fa', 'user_two_factor.enabled as two_factor_enabled'])
    .where('account_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export function findSignedInUser(db: Executor, id: number): Promise<SignedInUserRow | undefined> {
  return db
    .selectFrom('users')
    .leftJoin('user_two_factor', 'user_two_factor.user_id', 'users.id')
    .selectAll('users')
    .select(['user_two_factor.force_2fa', 'user_two_factor.enabled as two_factor_enabled'])
    .where('users.id', '=', id)
    .executeTakeFirst();
}
