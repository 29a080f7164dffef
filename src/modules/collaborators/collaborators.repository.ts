import type { Executor } from '../../db/index.js';
import { usersWithAccess } from '../access/index.js';

export interface RelatedUserRow {
  virtual_id: string;
  name: string;
  email: string;
}

/** Everyone with access to the base (`access`'s `usersWithAccess`: its owner, shares, groups), active users only. */
export async function relatedUsers(db: Executor, baseId: number): Promise<RelatedUserRow[]> {
  // A trashed base has no collaborators to show (every path answers it as deleted).
  const live = await db.selectFrom('bases').select('id').where('id', '=', baseId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!live) return [];
  const access = await usersWithAccess(db, [baseId]);
  if (access.length === 0) return [];
  const users = await db
    .selectFrom('users')
    .select(['id', 'virtual_id', 'name', 'email'])
    .where('id', 'in', access.map((a) => a.user_id))
    .where('is_active', '=', 1)
    .execute();
  const byId = new Map(users.map((u) => [Number(u.id), u]));
  return access.flatMap((a) => {
    const u = byId.get(a.user_id);
    return u ? [{ virtual_id: u.virtual_id, name: u.name, email: u.email }] : [];
  });
}
