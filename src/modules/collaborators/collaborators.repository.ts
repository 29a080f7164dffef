import type { Executor } from '../../db/index.js';

export interface RelatedUserRow {
  virtual_id: string;
  name: string;
  email: string;
}

/** Everyone with access to the base: its owner, then the users it is shared with (active users only). */
export async function relatedUsers(db: Executor, baseId: number): Promise<RelatedUserRow[]> {
  const owner = await db
    .selectFrom('bases')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .innerJoin('users', 'users.id', 'workspaces.owner_id')
    .select(['users.virtual_id', 'users.name', 'users.email'])
    .where('bases.id', '=', baseId)
    .where('bases.deleted_at', 'is', null)
    .where('users.is_active', '=', 1)
    .execute();
  // A trashed base has no collaborators to show (every path answers it as deleted).
  if (owner.length === 0) return [];
  const shared = await db
    .selectFrom('base_shares')
    .innerJoin('users', 'users.id', 'base_shares.user_id')
    .select(['users.virtual_id', 'users.name', 'users.email'])
    .where('base_shares.base_id', '=', baseId)
    .where('users.is_active', '=', 1)
    .orderBy('base_shares.created_at')
    .orderBy('users.id')
    .execute();
  return [...owner, ...shared];
}
