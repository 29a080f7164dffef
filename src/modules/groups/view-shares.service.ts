import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound, permissionDenied } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';
import { GROUP_REQUIRED, REQUIRED, groupRoleAtLeast, type BaseAccess, type BaseListing } from '../access/index.js';
import { loadMetadata } from '../rows/index.js';
import * as groups from './groups.repository.js';
import type { BaseTarget } from './group-shares.service.js';
import { lossesOf, type AccessRevocation } from './revocation.js';
import * as repo from './shares.repository.js';
import type { ViewShareListing } from './shares.repository.js';

export type ViewShareKind = 'user' | 'group';
export type ViewPermission = 'r' | 'rw';

const MAX_SHARED_NAME = 255;

/**
 * `…/user-view-shares/` and `…/group-view-shares/`: one view of a base shared read-only or read-write
 * with a user or a group (base admins manage them). A view share grants no permission on the base; the
 * recipient exchanges it for a Base-Token limited to the view (the tokens module). Changing or removing
 * one revokes the recipients' Base-Tokens on the base in the same transaction.
 */
export class ViewSharesService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly accounts: AccountsService,
    private readonly revocation: AccessRevocation,
  ) {}

  async list(user: AccountUser, target: BaseTarget, kind: ViewShareKind, query: { table_id?: unknown; view_id?: unknown }) {
    const base = await this.managed(user, target);
    const view =
      typeof query.table_id === 'string' && typeof query.view_id === 'string' && query.table_id !== '' && query.view_id !== ''
        ? { tableId: query.table_id, viewId: query.view_id }
        : undefined;
    return repo.listViewSharesOfBase(this.db, base.id, kind, view);
  }

  /** Shares a view with a user (`to_user`); returns the new share. */
  async addForUser(user: AccountUser, target: BaseTarget, body: Record<string, unknown>): Promise<ViewShareListing> {
    const { tableId, viewId, permission, sharedName } = checkShareInput(body);
    if (typeof body.to_user !== 'string' || body.to_user.trim() === '' || body.to_user.length > 255) throw badRequest('to_user invalid.');
    const base = await this.managed(user, target);
    await checkView(this.db, base, tableId, viewId);
    const recipient = await this.accounts.findUser(body.to_user);
    if (!recipient) throw notFound(`User ${body.to_user.trim()} not found.`);
    if (recipient.id === user.id) throw badRequest('The view cannot be shared to yourself.');
    const id = await this.insert(base, { tableId, viewId, permission, sharedName }, user.id, recipient.id, null);
    return (await repo.findViewShare(this.db, id, base.id, 'user'))!;
  }

  /** Shares a view with each group of `to_group_ids` (or one `to_group_id`); the sharer must be in each. */
  async addForGroups(user: AccountUser, target: BaseTarget, body: Record<string, unknown>): Promise<ViewShareListing[]> {
    const { tableId, viewId, permission, sharedName } = checkShareInput(body);
    const ids = groupIds(body.to_group_ids ?? body.to_group_id);
    const base = await this.managed(user, target);
    await checkView(this.db, base, tableId, viewId);
    const created: ViewShareListing[] = [];
    for (const groupId of ids) {
      if (!(await groups.findGroup(this.db, groupId))) throw notFound('Group not found.');
      if (!groupRoleAtLeast(await this.access.groupRole(groupId, user.id), GROUP_REQUIRED.view)) throw permissionDenied();
    }
    for (const groupId of ids) {
      const id = await this.insert(base, { tableId, viewId, permission, sharedName }, user.id, null, groupId);
      created.push((await repo.findViewShare(this.db, id, base.id, 'group'))!);
    }
    return created;
  }

  async update(user: AccountUser, target: BaseTarget, kind: ViewShareKind, shareId: unknown, body: Record<string, unknown>): Promise<ViewShareListing> {
    const permission = checkViewPermission(body.permission);
    const sharedName = body.shared_name === undefined ? undefined : checkSharedName(body.shared_name);
    const base = await this.managed(user, target);
    const share = await this.find(base, kind, shareId);
    await this.change(share, (trx) => repo.updateViewShare(trx, share.id, permission, sharedName));
    return (await repo.findViewShare(this.db, share.id, base.id, kind))!;
  }

  async remove(user: AccountUser, target: BaseTarget, kind: ViewShareKind, shareId: unknown): Promise<void> {
    const base = await this.managed(user, target);
    const share = await this.find(base, kind, shareId);
    await this.change(share, (trx) => repo.deleteViewShare(trx, share.id));
  }

  /** `DELETE …?table_id=&view_id=`: stops sharing the view with every user (or every group). */
  async removeAllOfView(user: AccountUser, target: BaseTarget, kind: ViewShareKind, query: { table_id?: unknown; view_id?: unknown }): Promise<void> {
    if (typeof query.table_id !== 'string' || query.table_id === '') throw badRequest('table_id invalid.');
    if (typeof query.view_id !== 'string' || query.view_id === '') throw badRequest('view_id invalid.');
    const base = await this.managed(user, target);
    const shares = await repo.listViewSharesOfBase(this.db, base.id, kind, { tableId: query.table_id, viewId: query.view_id });
    for (const share of shares) await this.change(share, (trx) => repo.deleteViewShare(trx, share.id));
  }

  /** The views shared with the user directly. */
  sharedWithUser(user: AccountUser): Promise<ViewShareListing[]> {
    return repo.listViewSharesToUser(this.db, user.id);
  }

  /** The views shared with the user's groups. */
  sharedWithUsersGroups(user: AccountUser): Promise<ViewShareListing[]> {
    return repo.listViewSharesToUsersGroups(this.db, user.id);
  }

  /** The recipient leaves a view shared with them; for a group's share, an admin of that group removes it. */
  async leave(user: AccountUser, kind: ViewShareKind, shareId: unknown): Promise<void> {
    const id = parsePositiveId(shareId);
    const listing = id === null ? undefined : (kind === 'user' ? await repo.listViewSharesToUser(this.db, user.id) : await repo.listViewSharesToUsersGroups(this.db, user.id)).find((s) => s.id === id);
    if (!listing) throw notFound('View share not found.');
    if (kind === 'group' && !groupRoleAtLeast(await this.access.groupRole(listing.to_group_id!, user.id), GROUP_REQUIRED.manage)) throw permissionDenied();
    await this.change(listing, (trx) => repo.deleteViewShare(trx, listing.id));
  }

  private async managed(user: AccountUser, target: BaseTarget): Promise<BaseListing> {
    return (await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares)).base;
  }

  private async find(base: BaseListing, kind: ViewShareKind, shareId: unknown): Promise<ViewShareListing> {
    const id = parsePositiveId(shareId);
    const share = id === null ? undefined : await repo.findViewShare(this.db, id, base.id, kind);
    if (!share) throw notFound('View share not found.');
    return share;
  }

  private async insert(
    base: BaseListing,
    input: { tableId: string; viewId: string; permission: ViewPermission; sharedName: string | null },
    fromUserId: number,
    toUserId: number | null,
    toGroupId: number | null,
  ): Promise<number> {
    try {
      return await repo.insertViewShare(this.db, {
        base_id: base.id,
        table_id: input.tableId,
        view_id: input.viewId,
        permission: input.permission,
        from_user_id: fromUserId,
        to_user_id: toUserId,
        to_group_id: toGroupId,
        shared_name: input.sharedName,
        created_at: this.clock.now(),
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('The view is already shared to it.');
      throw error;
    }
  }

  /** Writes the change and revokes the recipients' Base-Tokens on the base in one transaction. */
  private async change(share: ViewShareListing, write: (trx: import('../../db/index.js').Executor) => Promise<void>): Promise<void> {
    let losses: ReturnType<typeof lossesOf> = [];
    await this.db.transaction().execute(async (trx) => {
      await write(trx);
      const users = share.to_user_id !== null ? [share.to_user_id] : await groups.memberIds(trx, share.to_group_id!);
      losses = lossesOf([share.base_id], users);
      await this.revocation.revokeIn(trx, losses);
    });
    await this.revocation.announce(losses);
  }
}

function checkShareInput(body: Record<string, unknown>) {
  if (typeof body.table_id !== 'string' || body.table_id === '' || body.table_id.length > 16) throw badRequest('table_id invalid.');
  if (typeof body.view_id !== 'string' || body.view_id === '' || body.view_id.length > 16) throw badRequest('view_id invalid.');
  const permission = checkViewPermission(body.permission);
  const sharedName = body.shared_name === undefined || body.shared_name === null || body.shared_name === '' ? null : checkSharedName(body.shared_name);
  return { tableId: body.table_id, viewId: body.view_id, permission, sharedName };
}

function checkViewPermission(value: unknown): ViewPermission {
  if (value !== 'r' && value !== 'rw') throw badRequest('permission invalid.');
  return value;
}

function checkSharedName(value: unknown): string | null {
  if (value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > MAX_SHARED_NAME) throw badRequest('shared_name invalid.');
  return value;
}

function groupIds(value: unknown): number[] {
  const items = Array.isArray(value) ? value : value === undefined || value === null || value === '' ? [] : String(value).split(',');
  if (items.length === 0 || items.length > 50) throw badRequest('to_group_ids invalid.');
  return [
    ...new Set(
      items.map((v) => {
        const id = parsePositiveId(v);
        if (id === null) throw badRequest('to_group_ids invalid.');
        return id;
      }),
    ),
  ];
}

async function checkView(db: Db, base: BaseListing, tableId: string, viewId: string): Promise<void> {
  const meta = await loadMetadata(db, base.id);
  const table = meta.tables.find((t) => t._id === tableId);
  if (!table) throw notFound(`Table ${tableId} not found.`);
  if (!table.views.some((v) => v._id === viewId)) throw notFound(`View ${viewId} not found.`);
}
