import type { Db, Executor } from '../../db/index.js';
import { notFound, permissionDenied } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import * as repo from './access.repository.js';
import type { BaseListing, UserBases, WorkspaceRow } from './access.repository.js';
import { atLeast, decide, isSharePermission, type AccessDecision, type BasePermission } from './policy.js';

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

  /** The policy's decision for a user on a base (the owner needs no share lookup). */
  async decisionFor(base: Pick<BaseListing, 'id' | 'owner_id'>, userId: number): Promise<AccessDecision> {
    const share = base.owner_id === userId ? null : await repo.findShare(this.db, base.id, userId);
    return decide({ kind: 'user', userId, ownerId: base.owner_id, share: isSharePermission(share) ? share : null });
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
  const ownerId = await repo.findBaseOwnerId(executor, baseId);
  if (ownerId === undefined) return decide({ kind: 'user', userId, ownerId: -1, share: null });
  const share = ownerId === userId ? null : await repo.findShare(executor, baseId, userId);
  return decide({ kind: 'user', userId, ownerId, share: isSharePermission(share) ? share : null });
}
