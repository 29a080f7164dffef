import type { Db, Executor } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import { GROUP_REQUIRED, REQUIRED, groupRoleAtLeast, isSharePermission, type BaseAccess, type SharePermission } from '../access/index.js';
import * as groups from './groups.repository.js';
import { lossesOf, type AccessRevocation } from './revocation.js';
import * as repo from './shares.repository.js';

export interface BaseTarget {
  workspaceId: string;
  baseName: string;
}

/** Groups shared at once by one request. */
export const MAX_GROUPS_PER_SHARE = 50;

/**
 * `…/group-shares/`: a base shared with a whole group at `r`, `rw` or `admin` (base admins manage them;
 * the sharer must be a member of the group). A share changed or removed revokes the members' Base-Tokens
 * on the base in the same transaction.
 */
export class GroupSharesService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly revocation: AccessRevocation,
  ) {}

  async list(user: AccountUser, target: BaseTarget) {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    return repo.listGroupShares(this.db, base.id);
  }

  /** Shares with each group of `groupIds` (`group_ids` list or one `group_id`); each one added or named in `failed`. */
  async add(user: AccountUser, target: BaseTarget, groupIds: unknown, permission: unknown) {
    const perm = checkPermission(permission);
    const ids = checkGroupIds(groupIds);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    const success: Array<{ group_id: number; group_name: string; permission: SharePermission }> = [];
    const failed: Array<{ group_id: number; error_msg: string }> = [];
    for (const id of ids) {
      const group = await groups.findGroup(this.db, id);
      if (!group) {
        failed.push({ group_id: id, error_msg: 'Group not found.' });
        continue;
      }
      if (!groupRoleAtLeast(await this.access.groupRole(id, user.id), GROUP_REQUIRED.view)) {
        failed.push({ group_id: id, error_msg: 'Permission denied.' });
        continue;
      }
      if (base.group_id === id) {
        failed.push({ group_id: id, error_msg: 'The base belongs to this group.' });
        continue;
      }
      try {
        await repo.insertGroupShare(this.db, base.id, id, perm, this.clock.now());
        success.push({ group_id: id, group_name: group.name, permission: perm });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        failed.push({ group_id: id, error_msg: `Base ${base.name} is already shared to group ${group.name}.` });
      }
    }
    if (success.length === 0 && failed.length === 1) {
      const only = failed[0]!;
      if (only.error_msg === 'Group not found.') throw notFound(only.error_msg);
      if (only.error_msg.startsWith('Base ')) throw conflict(only.error_msg);
      throw badRequest(only.error_msg);
    }
    return { success, failed };
  }

  async update(user: AccountUser, target: BaseTarget, groupId: unknown, permission: unknown): Promise<void> {
    const perm = checkPermission(permission);
    const id = checkGroupId(groupId);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    await this.change(base.id, id, (trx) => repo.updateGroupShare(trx, base.id, id, perm));
  }

  async remove(user: AccountUser, target: BaseTarget, groupId: unknown): Promise<void> {
    const id = checkGroupId(groupId);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    await this.change(base.id, id, (trx) => repo.deleteGroupShare(trx, base.id, id));
  }

  private async change(baseId: number, groupId: number, write: (trx: Executor) => Promise<boolean>) {
    let losses: ReturnType<typeof lossesOf> = [];
    await this.db.transaction().execute(async (trx) => {
      if (!(await write(trx))) throw notFound('Group share not found.');
      losses = lossesOf([baseId], await groups.memberIds(trx, groupId));
      await this.revocation.revokeIn(trx, losses);
    });
    await this.revocation.announce(losses);
  }
}

export function checkPermission(value: unknown): SharePermission {
  if (!isSharePermission(value)) throw badRequest('permission invalid.');
  return value;
}

function checkGroupId(value: unknown): number {
  const id = parsePositiveId(value);
  if (id === null) throw badRequest('group_id invalid.');
  return id;
}

function checkGroupIds(value: unknown): number[] {
  const items = Array.isArray(value) ? value : value === undefined || value === null || value === '' ? [] : String(value).split(',');
  if (items.length === 0) throw badRequest('group_id invalid.');
  if (items.length > MAX_GROUPS_PER_SHARE) throw badRequest(`At most ${MAX_GROUPS_PER_SHARE} groups can be shared with at once.`);
  return [...new Set(items.map(checkGroupId))];
}
