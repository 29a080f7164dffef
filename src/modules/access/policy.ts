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

/** A member's role in a group. */
export type GroupRole = 'owner' | 'admin' | 'member';

/**
 * What a role in the group that owns a base's workspace grants on the base: the group's owner and
 * admins manage the group's bases (delete included), members read and write them.
 */
export function groupRolePermission(role: GroupRole | null | undefined): BasePermission {
  if (!role) return 'none';
  return role === 'member' ? 'rw' : 'owner';
}

/** The highest of some permissions ('none' for none). */
export function highest(...permissions: Array<BasePermission | null | undefined>): BasePermission {
  let best: BasePermission = 'none';
  for (const p of permissions) if (p && RANK[p] > RANK[best]) best = p;
  return best;
}

/**
 * The permission of `userId` on a base owned by `ownerId`: the best of being its owner, the user's own
 * share, the user's role in the group whose workspace holds the base, and the shares to the user's groups.
 */
export function permissionOn(
  ownerId: number,
  userId: number,
  share: SharePermission | null | undefined,
  groupRole: GroupRole | null = null,
  groupShares: readonly SharePermission[] = [],
): BasePermission {
  if (ownerId === userId) return 'owner';
  return highest(share, groupRolePermission(groupRole), ...groupShares);
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

/**
 * Whether a user may create, copy or move bases into a workspace: a personal workspace only its owner,
 * a group's workspace every member of the group (`groupRole` is the user's role in that group).
 */
export function mayCreateBaseIn(workspace: { owner_id: number; group_id: number | null }, userId: number, groupRole: GroupRole | null = null): boolean {
  if (workspace.group_id !== null) return groupRole !== null;
  return workspace.owner_id === userId;
}

/** What each operation on a group needs from the caller's role in it. */
export const GROUP_REQUIRED = {
  /** See the group, its members and its workspace. */
  view: 'member',
  /** Rename; add, remove and search members; manage the group's trash. */
  manage: 'admin',
  /** Make or unmake admins, transfer, delete the group. */
  own: 'owner',
} as const satisfies Record<string, GroupRole>;

const GROUP_RANK: Record<GroupRole, number> = { member: 1, admin: 2, owner: 3 };

/** Whether a role in a group (null: not a member) is enough for an operation on it. */
export function groupRoleAtLeast(role: GroupRole | null | undefined, need: GroupRole): boolean {
  return role !== null && role !== undefined && GROUP_RANK[role] >= GROUP_RANK[need];
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
 * its permission. A view share is not a fact here: it grants no permission on the base, only a
 * Base-Token limited to its view (see `viewShareGrant`).
 */
export type AccessFacts =
  | {
      kind: 'user';
      userId: number;
      ownerId: number;
      share: SharePermission | null;
      /** The user's role in the group whose workspace holds the base (null: personal workspace or not a member). */
      groupRole?: GroupRole | null;
      /** The permissions the base is shared at with groups the user is in. */
      groupShares?: readonly SharePermission[];
    }
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
      return permissionOn(facts.ownerId, facts.userId, facts.share, facts.groupRole ?? null, facts.groupShares ?? []);
    case 'api-token':
    case 'base-token':
      // 'rw' or 'r'; anything else only reads, as the original.
      return facts.permission === 'rw' ? 'rw' : 'r';
    case 'external-link':
      return 'r';
  }
}
