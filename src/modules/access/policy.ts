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

/** Whether an account may use the admin endpoints (`config.auth: 'admin'`): system administrators only. */
export function mayAdminister(account: { isStaff: boolean }): boolean {
  return account.isStaff;
}

/** Whether a user may create or copy bases into a workspace: only its owner (personal workspaces). */
export function mayCreateBaseIn(workspaceOwnerId: number, userId: number): boolean {
  return workspaceOwnerId === userId;
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
  /** Update or delete a locked row (API-Tokens and links never may). */
  changeLockedRows: 'admin',
  delete: 'owner',
} as const satisfies Record<string, BasePermission>;

/**
 * A credential and the facts about it on one base — everything a decision needs. A user (Account-Token,
 * or a temporary API-Token naming the user) is judged by the base's owner and the user's share; an
 * API-Token by its own permission; a valid external link is read-only; a verified Base-Token carries
 * its permission. (A group role, a view share or a token scope will each be one more fact here.)
 */
export type AccessFacts =
  | { kind: 'user'; userId: number; ownerId: number; share: SharePermission | null }
  | { kind: 'api-token'; permission: string }
  | { kind: 'external-link' }
  | { kind: 'base-token'; permission: string };

export interface AccessDecision {
  permission: BasePermission;
  /** What a Base-Token issued on these facts carries; null when none may be issued. */
  tokenPermission: TokenPermission | null;
  canRead: boolean;
  canWrite: boolean;
}

/** What the credential may do on the base: the one place where access is decided. */
export function decide(facts: AccessFacts): AccessDecision {
  const permission = permissionFrom(facts);
  return {
    permission,
    tokenPermission: tokenPermissionFor(permission),
    canRead: atLeast(permission, REQUIRED.read),
    canWrite: atLeast(permission, REQUIRED.write),
  };
}

function permissionFrom(facts: AccessFacts): BasePermission {
  switch (facts.kind) {
    case 'user':
      return permissionOn(facts.ownerId, facts.userId, facts.share);
    case 'api-token':
    case 'base-token':
      // 'rw' or 'r'; anything else only reads, as the original.
      return facts.permission === 'rw' ? 'rw' : 'r';
    case 'external-link':
      return 'r';
  }
}
