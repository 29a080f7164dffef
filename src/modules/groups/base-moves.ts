import type { DialectName, Executor } from '../../db/index.js';
import { badRequest, notFound, permissionDenied } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { BaseAccess, WorkspaceRow } from '../access/index.js';
import { memberIds } from './groups.repository.js';
import { lossesOf, type AccessLoss, type AccessRevocation } from './revocation.js';

/**
 * Moving bases between workspaces (a basegate extension: the base rename route's `to_workspace_id`, a
 * group delete's `move_bases_to`). A base keeps its id, uuid, rows, shares, tokens, webhooks and rules;
 * who reached it through the workspace it leaves (that workspace's owner, or its group's members) and
 * does not reach the target the same way loses that access, revoked as a removed group member's is.
 */
export class BaseMoves {
  constructor(
    private readonly access: BaseAccess,
    private readonly revocation: AccessRevocation,
    private readonly dialect: DialectName,
  ) {}

  /**
   * The workspace `id` (or a group's), locked for the rest of `trx` on PostgreSQL: a move and a group
   * delete both take the source workspace first, so they run one after the other instead of taking the
   * bases' rows and the revoked tokens' versions in opposite orders (a deadlock). SQLite runs one
   * transaction at a time.
   */
  async lockWorkspace(trx: Executor, where: { id: number } | { groupId: number }): Promise<WorkspaceRow | undefined> {
    // A group's row before its workspace's, in the order a user's deletion locks them (lockGroupsOwnedBy).
    if ('groupId' in where && this.dialect === 'postgres') await trx.selectFrom('groups').select('id').where('id', '=', where.groupId).forUpdate().execute();
    let query = trx.selectFrom('workspaces').selectAll();
    query = 'id' in where ? query.where('id', '=', where.id) : query.where('group_id', '=', where.groupId);
    return (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  }

  /** The workspace named by `value` when `userId` may create bases in it: not an id → 400, unknown → 404, not allowed → 403. */
  async target(userId: number, value: unknown, field: string): Promise<WorkspaceRow> {
    const id = parsePositiveId(value);
    if (id === null) throw badRequest(`${field} invalid.`);
    const workspace = await this.access.findWorkspace(id);
    if (!workspace) throw notFound(`Workspace ${id} not found.`);
    if (!(await this.access.mayCreateIn(workspace, userId))) throw permissionDenied();
    return workspace;
  }

  /** The first of `names` a live base of the workspace already has (trashed bases hold placeholder names). */
  async clashingName(trx: Executor, names: readonly string[], workspaceId: number): Promise<string | undefined> {
    if (names.length === 0) return undefined;
    const row = await trx
      .selectFrom('bases')
      .select('name')
      .where('workspace_id', '=', workspaceId)
      .where('name', 'in', [...names])
      .orderBy('name')
      .executeTakeFirst();
    return row?.name;
  }

  /**
   * Moves the bases (trashed ones only with `trashedToo`) from `from` to `to` inside `trx` and revokes, in it, the Base-Tokens
   * of those who lose access; returns how many moved and the losses, to `announce` after the commit.
   */
  async moveIn(
    trx: Executor,
    baseIds: readonly number[],
    from: WorkspaceRow,
    to: WorkspaceRow,
    by: { userId: number; now: number; trashedToo: boolean },
  ): Promise<{ moved: number; losses: AccessLoss[] }> {
    if (baseIds.length === 0 || from.id === to.id) return { moved: 0, losses: [] };
    const result = await trx
      .updateTable('bases')
      .set({ workspace_id: to.id, modifier_id: by.userId, updated_at: by.now })
      .where('id', 'in', [...baseIds])
      .where('workspace_id', '=', from.id)
      .$if(!by.trashedToo, (q) => q.where('deleted_at', 'is', null))
      .executeTakeFirst();
    const keep = new Set(await workspaceUsers(trx, to));
    const leaving = (await workspaceUsers(trx, from)).filter((id) => !keep.has(id));
    const losses = lossesOf(baseIds, leaving);
    await this.revocation.revokeIn(trx, losses);
    // Fewer than asked: a base left `from` meanwhile (moved, or deleted with its group); the caller decides.
    return { moved: Number(result.numUpdatedRows), losses };
  }

  /** After the move's commit: tells the other instances (their verifiers drop the revoked tokens). */
  announce(losses: readonly AccessLoss[]): Promise<void> {
    return this.revocation.announce(losses);
  }
}

/** Who reaches a workspace's bases through the workspace: its group's members, or its owner. */
async function workspaceUsers(trx: Executor, workspace: WorkspaceRow): Promise<number[]> {
  return workspace.group_id === null ? [workspace.owner_id] : memberIds(trx, workspace.group_id);
}
