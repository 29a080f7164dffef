/**
 * The permission model for bases, pure and in one place: owner ⊃ admin ⊃ rw ⊃ r ⊃ none.
 * Every endpoint that touches a base asks this module; nothing else compares permissions.
 */
export type BasePermission = 'owner' | 'admin' | 'rw' | 'r' | 'none';
export type SharePermission = 'admin' | 'rw' | 'r';
/** What a Base-Token can carry. */
export type TokenPermission = 'rw' | 'r';

const RANK: Record<BasePermission, number> = { none: 0, r: 1, rw: 2, admin: 3, owner: 4 };

export const SHARE_PERMISSIONS: readonly SharePermission[] = ['r', 'rw', 'admin'];

export function isSharePermission(value: unknown): value is SharePermission {
  return typeof value === 'string' && (SHARE_PERMISSIONS as readonly string[]).includes(value);
}

/** The permission of `userId` on a base owned by `ownerId`, given the user's share (if any). */
export function permissionOn(ownerId: number, userId: number, share: SharePermission | null | undefined): BasePermission {
  if (ownerId === userId) return 'owner';
  return share ?? 'none';
}

export function atLeast(have: BasePermission, need: BasePermission): boolean {
  return RANK[have] >= RANK[need];
}

/** The permission a Base-Token issued to this user carries: owner/admin/rw → rw, r → r, none → null. */
export function tokenPermissionFor(permission: BasePermission): TokenPermission | null {
  if (permission === 'none') return null;
  return atLeast(permission, 'rw') ? 'rw' : 'r';
}

/** What each action on a base requires. */
export const REQUIRED = {
  read: 'r',
  write: 'rw',
  manageShares: 'admin',
  manageExternalLinks: 'admin',
  manageApiTokens: 'admin',
  manageWebhooks: 'admin',
  rename: 'admin',
  delete: 'owner',
} as const satisfies Record<string, BasePermission>;
