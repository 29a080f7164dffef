import type { Db, Executor } from '../../db/index.js';
import { notFound, permissionDenied } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import { atLeast, isSharePermission, permissionOn, type BasePermission } from './base-policy.js';
import * as repo from './workspaces.repository.js';
import type { BaseListing } from './workspaces.repository.js';
import { parsePositiveId } from '../../shared/ids.js';

export interface ResolvedBase {
  base: BaseListing;
  permission: BasePermission;
}

/**
 * Resolves `{workspace_id}/dtable/{base_name}` for a user in the contract's order:
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
    if (base.owner_id === userId) return 'owner';
    const share = await repo.findShare(this.db, base.id, userId);
    return permissionOn(base.owner_id, userId, isSharePermission(share) ? share : null);
  }

  /** What a user can reach: shared base ids and owned base uuids (for revocation; `db` may be a transaction). */
  basesOfUser(userId: number, db: Executor = this.db): Promise<repo.UserBases> {
    return repo.basesOfUser(db, userId);
  }

  findByUuid(uuid: string): Promise<BaseListing | undefined> {
    return repo.findBaseByUuid(this.db, uuid);
  }
}

