import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { conflict, notFound, permissionDenied } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import type { AccountUser } from '../accounts/index.js';
import { GROUP_REQUIRED, groupRoleAtLeast, type BaseAccess, type BaseListing } from '../access/index.js';
import { baseRecord } from './workspaces.present.js';
import * as repo from './workspaces.repository.js';

const DAY_MS = 86_400_000;
/** Bases purged per transaction-free step of the retention tick; the tick stops after MAX_BATCHES. */
const PURGE_BATCH = 100;
const MAX_BATCHES = 50;

/**
 * Whose trash: a user's own (their personal workspace's bases), a group's (its workspace's bases, for
 * its owner and admins), or every base (`null`: the system admin's `admin/trash-dtables/`).
 */
export type TrashOwner = AccountUser | { groupId: number } | null;
const scopeOf = (owner: TrashOwner): repo.TrashScope => (owner === null ? null : 'groupId' in owner ? { groupId: owner.groupId } : { userId: owner.id });

export interface TrashPage {
  page: number;
  perPage: number;
}

/**
 * The base trash (`/api/v2.1/trash-dtables/`): a deleted base keeps everything (tables, rows, shares,
 * tokens, files) but answers as deleted everywhere until it is restored or purged. A purge deletes
 * its bulk data in batches and its files (`purgeData`), then its row, and so by cascade the rest;
 * `afterChange` then lets caches drop it. Everything that is not in the base's row goes before the row:
 * a purge that stops anywhere leaves the base claimed, and the next tick finds it and finishes.
 */
export class BaseTrash {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    private readonly afterChange: (base: BaseListing) => Promise<void>,
    private readonly access: BaseAccess,
    /** Deletes a purged base's bulk data (rows, links, comments, log) in short batches, and its files, before its row goes. */
    private readonly purgeData: (base: BaseListing) => Promise<void> = async () => {},
  ) {}

  /**
   * The trash of group `groupId` for `user`: its owner and admins only (`GROUP_REQUIRED.manage`); 403 for
   * its members, 404 for anyone else (as for an unknown group).
   */
  async groupTrash(user: AccountUser, groupId: number): Promise<{ groupId: number }> {
    const role = await this.access.groupRole(groupId, user.id);
    if (role === null) throw notFound('Group not found.');
    if (!groupRoleAtLeast(role, GROUP_REQUIRED.manage)) throw permissionDenied();
    return { groupId };
  }

  async moveToTrash(base: BaseListing): Promise<void> {
    await repo.trashBase(this.db, base.id, this.clock.now());
    await this.afterChange(base);
  }

  async list(user: TrashOwner, paging: TrashPage) {
    const rows = await repo
      .trashedBasesQuery(this.db, scopeOf(user))
      .orderBy('bases.deleted_at', 'desc')
      .orderBy('bases.id', 'desc')
      .limit(paging.perPage)
      .offset((paging.page - 1) * paging.perPage)
      .execute();
    return {
      count: await repo.countTrashedBases(this.db, scopeOf(user)),
      trash_dtable_list: rows.map((base) => ({
        ...baseRecord({ ...base, name: base.trashed_name ?? base.name }),
        deleted: true,
        delete_time: isoSeconds(base.deleted_at),
        owner: base.owner_name,
      })),
    };
  }

  /** Puts a trashed base back in its workspace under its name; 409 when a base took that name meanwhile. */
  async restore(user: TrashOwner, baseId: number): Promise<void> {
    await this.putBack(await this.trashed(user, baseId));
  }

  /** `restore` of a group's trashed base, named by its uuid (the original's group trash route). */
  async restoreByUuid(owner: { groupId: number }, uuid: string): Promise<void> {
    const base = await repo.trashedBasesQuery(this.db, scopeOf(owner)).where('bases.uuid', '=', uuid).executeTakeFirst();
    if (!base) throw notFound(`Base ${uuid} not found in the trash.`);
    await this.putBack(base);
  }

  private async putBack(base: BaseListing & { trashed_name: string | null }): Promise<void> {
    try {
      if (!(await repo.untrashBase(this.db, base.id, base.trashed_name ?? base.name))) throw notFound(`Base ${base.id} not found in the trash.`);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`A base named ${base.trashed_name} already exists in the workspace; rename it first.`);
      throw error;
    }
    await this.afterChange(base);
  }

  /** Deletes one trashed base for good. */
  async purge(user: TrashOwner, baseId: number): Promise<void> {
    await this.purgeBase(await this.trashed(user, baseId));
  }

  /** Empties the user's trash. */
  async clear(user: AccountUser): Promise<number> {
    let purged = 0;
    for (;;) {
      const batch = await repo.trashedBasesQuery(this.db, { userId: user.id }).orderBy('bases.id').limit(PURGE_BATCH).execute();
      for (const base of batch) await this.purgeBase(base);
      purged += batch.length;
      if (batch.length < PURGE_BATCH) return purged;
    }
  }

  /** The scheduler's tick: purges bases trashed longer than TRASH_RETENTION_DAYS, in batches. */
  async purgeExpired(now: number): Promise<{ purged: number }> {
    const cutoff = now - this.retentionDays * DAY_MS;
    let purged = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const batch = await repo.expiredTrashedBases(this.db, cutoff, PURGE_BATCH);
      for (const base of batch) await this.purgeBase(base);
      purged += batch.length;
      if (batch.length < PURGE_BATCH) break;
    }
    return { purged };
  }

  private async trashed(user: TrashOwner, baseId: number) {
    const base = await repo.trashedBasesQuery(this.db, scopeOf(user)).where('bases.id', '=', baseId).executeTakeFirst();
    if (!base) throw notFound(`Base ${baseId} not found in the trash.`);
    return base;
  }

  /**
   * Claimed first (out of the listings and restores; the next tick finishes a purge that stopped), then
   * its data in short batches and its files, then its row, whose cascade is left with little to delete.
   * (Files deleted after the row would stay forever when the purge stopped in between: nothing would
   * name the base any more.)
   */
  private async purgeBase(base: BaseListing): Promise<void> {
    await repo.claimTrashedBase(this.db, base.id);
    await this.purgeData(base);
    await repo.deleteBase(this.db, base.id);
    await this.afterChange(base);
  }
}
