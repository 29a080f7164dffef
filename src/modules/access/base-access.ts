import type { Db, Executor } from '../../db/index.js';
import { notFound, permissionDenied } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import * as repo from './access.repository.js';
import type { BaseListing, UserBases, ViewShareRow, WorkspaceRow } from './access.repository.js';
import { atLeast, decide, mayCreateBaseIn, type AccessDecision, type BasePermission, type GroupRole } from './policy.js';

export interface ResolvedBase {
  base: BaseListing;
  permission: BasePermission;
}

/**
 * Gathers the facts an access decision needs (the base and its owner, the user's share) and asks the
 * policy (`decide`). Resolves `{workspace_id}/dtable/{base_name}` for a user in the contract's order:
 * unknown workspace → 404, unknown base → 404, too little permission → 403.
 */
export class BaseAccess {
  constructor(private readonly db: Db) {}

  async resolve(user: AccountUser, workspaceId: string | number, baseName: string, need: BasePermission): Promise<ResolvedBase> {
    const base = await this.find(workspaceId, baseName);
    const permission = await this.permissionOf(base, user.id);
    if (!atLeast(permission, need)) throw permissionDenied();
    return { base, permission };
  }

  /** The base at `{workspace_id}/dtable/{base_name}`, without a permission check. */
  async find(workspaceId: string | number, baseName: string): Promise<BaseListing> {
    const id = parsePositiveId(workspaceId);
    const workspace = id === null ? undefined : await repo.findWorkspace(this.db, id);
    if (!workspace) throw notFound(`Workspace ${String(workspaceId)} not found.`);
    const base = await repo.findBase(this.db, workspace.id, baseName);
    if (!base) throw notFound(`dtable ${baseName} not found.`);
    return base;
  }

  async permissionOf(base: Pick<BaseListing, 'id' | 'owner_id'>, userId: number): Promise<BasePermission> {
    return (await this.decisionFor(base, userId)).permission;
  }

  /** The policy's decision for a user on a base (the owner needs no further lookup). */
  async decisionFor(base: Pick<BaseListing, 'id' | 'owner_id'> & { group_id?: number | null }, userId: number): Promise<AccessDecision> {
    return decisionIn(this.db, base, userId);
  }

  /** Whether the user may create, copy or move bases into the workspace (its owner; a group's members). */
  async mayCreateIn(workspace: WorkspaceRow, userId: number): Promise<boolean> {
    const role = workspace.group_id === null ? null : await repo.findGroupRole(this.db, workspace.group_id, userId);
    return mayCreateBaseIn(workspace, userId, role);
  }

  /** The user's role in a group (null: not a member). */
  groupRole(groupId: number, userId: number, db: Executor = this.db): Promise<GroupRole | null> {
    return repo.findGroupRole(db, groupId, userId);
  }

  /** The view share `id` (user or group kind) on the base, when it reaches the user; undefined otherwise. */
  viewShareFor(kind: 'user' | 'group', id: number, baseId: number, userId: number): Promise<ViewShareRow | undefined> {
    return repo.findViewShareFor(this.db, kind, id, baseId, userId);
  }

  /** Every base a group reaches (its workspace's, shared with it, with a view shared with it); `db` may be a transaction. */
  basesOfGroup(groupId: number, db: Executor = this.db): Promise<number[]> {
    return repo.basesOfGroup(db, groupId);
  }

  /** What a user can reach: shared base ids and owned base uuids (for revocation; `db` may be a transaction). */
  basesOfUser(userId: number, db: Executor = this.db): Promise<UserBases> {
    return repo.basesOfUser(db, userId);
  }

  findByUuid(uuid: string): Promise<BaseListing | undefined> {
    return repo.findBaseByUuid(this.db, uuid);
  }

  findById(id: number): Promise<BaseListing | undefined> {
    return repo.findBaseById(this.db, id);
  }

  findWorkspace(id: number): Promise<WorkspaceRow | undefined> {
    return repo.findWorkspace(this.db, id);
  }

  /** The base named `name` in a known workspace, or undefined. */
  findInWorkspace(workspaceId: number, name: string): Promise<BaseListing | undefined> {
    return repo.findBase(this.db, workspaceId, name);
  }
}

/**
 * A user's access to a base read inside `executor` (a write's transaction, so the decision and the
 * write see the same shares); `none` for an unknown base.
 */
export async function userAccessIn(executor: Executor, baseId: number, userId: number): Promise<AccessDecision> {
  const owner = await repo.findBaseOwner(executor, baseId);
  if (owner === undefined) return decide({ kind: 'user', userId, ownerId: -1, share: null });
  return decisionIn(executor, { id: baseId, owner_id: owner.ownerId, group_id: owner.groupId }, userId);
}

/** Gathers the user's facts on the base (own share, group role, group shares) and asks the policy. */
async function decisionIn(db: Executor, base: { id: number; owner_id: number; group_id?: number | null }, userId: number): Promise<AccessDecision> {
  if (base.owner_id === userId) return decide({ kind: 'user', userId, ownerId: base.owner_id, share: null });
  const groupId = base.group_id === undefined ? ((await repo.findBaseOwner(db, base.id))?.groupId ?? null) : base.group_id;
  const facts = await repo.userBaseFacts(db, base.id, groupId, userId);
  return decide({ kind: 'user', userId, ownerId: base.owner_id, ...facts });
}
