import type { Db } from '../../db/index.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound, permissionDenied } from '../../shared/errors.js';
import { newBaseUuid, parsePositiveId } from '../../shared/ids.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';
import { defaultMetadataJson, insertBlankBaseRows } from '../rows/index.js';
import {
  findGroupWorkspace,
  listBasesOfUsersGroups,
  listGroupBases,
  listGroupsOf,
  listMembers,
  listViewSharesToUsersGroups,
  type AccessLoss,
  type BaseMoves,
  type ViewShareListing,
} from '../groups/index.js';
import { REQUIRED, type BaseAccess, type BaseListing, type WorkspaceRow } from '../access/index.js';
import { BaseCopyService } from './base-copy.js';
import { BaseTrash } from './base-trash.js';
import * as repo from './workspaces.repository.js';

export const MAX_BASE_NAME_LENGTH = 255;

/** Trimmed base name, or 400: 1–255 characters, no slash, backslash or control character. */
export function checkBaseName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') throw badRequest(`${field} invalid.`);
  const name = value.trim();
  // eslint-disable-next-line no-control-regex
  if (name === '' || [...name].length > MAX_BASE_NAME_LENGTH || /[/\\\u0000-\u001f\u007f]/.test(name)) {
    throw badRequest(`${field} invalid.`);
  }
  return name;
}

/** Called after a base is renamed, moved to or restored from the trash, or purged, so caches holding it (the gateway's) can drop it. */
export type BaseChangeListener = (base: BaseListing) => Promise<void> | void;

export class BasesService {
  private readonly listeners: BaseChangeListener[] = [];
  private readonly purgeSteps: Array<(baseId: number, base: BaseListing) => Promise<void>> = [];
  private readonly copyListeners: Array<(source: BaseListing, copy: BaseListing) => Promise<void>> = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly accounts: AccountsService,
    trashRetentionDays = 30,
    private readonly moves?: BaseMoves,
  ) {
    this.trash = new BaseTrash(
      db,
      clock,
      trashRetentionDays,
      async (base) => {
        for (const listener of this.listeners) await listener(base);
      },
      access,
      async (base) => {
        for (const step of this.purgeSteps) await step(base.id, base);
      },
    );
  }

  /**
   * Called when a trashed base is purged, before its row is deleted, in the order registered: deletes
   * one kind of its data (or its files) in short batches. Must be safe to run again: a purge that
   * stopped is run again from the first step.
   */
  onBasePurge(step: (baseId: number, base: BaseListing) => Promise<void>): void {
    this.purgeSteps.push(step);
  }

  /** Deleted bases, restorable until TRASH_RETENTION_DAYS have passed. */
  readonly trash: BaseTrash;

  /** `POST /api/v2.1/dtable-copy/` (see BaseCopyService). */
  async copy(user: AccountUser, body: Record<string, unknown>): Promise<BaseListing> {
    const { source, created } = await new BaseCopyService(this.db, this.clock, this.access).copy(user, body);
    for (const listener of this.copyListeners) await listener(source, created);
    return created;
  }

  /** Called after a base is copied (its files are copied too). */
  onBaseCopied(listener: (source: BaseListing, copy: BaseListing) => Promise<void>): void {
    this.copyListeners.push(listener);
  }

  /** Does the base still have its row (in the trash or not)? Its files stay until it has none. */
  exists(uuid: string): Promise<boolean> {
    return repo.baseRowExists(this.db, uuid);
  }

  onBaseChanged(listener: BaseChangeListener): void {
    this.listeners.push(listener);
  }

  /** The user's personal workspace, created on first use. */
  async personalWorkspace(userId: number): Promise<WorkspaceRow> {
    const existing = await repo.findPersonalWorkspace(this.db, userId);
    if (existing) return existing;
    return this.db.transaction().execute(async (trx) => {
      return (await repo.findPersonalWorkspace(trx, userId)) ?? repo.insertWorkspace(trx, userId, this.clock.now());
    });
  }

  async listForUser(user: AccountUser) {
    const workspace = await this.personalWorkspace(user.id);
    const [own, shared, groups] = await Promise.all([
      repo.listWorkspaceBases(this.db, workspace.id),
      repo.listBasesSharedWith(this.db, user.id),
      this.groupWorkspacesOf(user.id),
    ]);
    return { workspace, own, shared, groups };
  }

  /** Per group of the user: the bases in its workspace and those shared with it (`/dtables/group-shared/`). */
  async groupShared(userId: number): Promise<Map<number, BaseListing[]>> {
    const byGroup = new Map<number, BaseListing[]>();
    for (const { group, bases } of await this.groupWorkspacesOf(userId)) byGroup.set(group.id, [...bases]);
    for (const row of await listBasesOfUsersGroups(this.db, userId)) {
      const gid = Number(row.shared_group_id);
      const list = byGroup.get(gid) ?? [];
      list.push(row);
      byGroup.set(gid, list);
    }
    return byGroup;
  }

  /** Per group of the user: the views shared with it, each with its base. */
  async groupSharedViews(userId: number) {
    const shares = await listViewSharesToUsersGroups(this.db, userId);
    const out = new Map<number, Array<{ base: BaseListing; share: ViewShareListing }>>();
    for (const share of shares) {
      const base = await this.access.findById(share.base_id);
      if (!base) continue;
      const list = out.get(share.to_group_id!) ?? [];
      list.push({ base, share });
      out.set(share.to_group_id!, list);
    }
    return out;
  }

  /** The user's groups, each with its workspace, members and bases. */
  async groupWorkspacesOf(userId: number) {
    const groups = await listGroupsOf(this.db, userId);
    return Promise.all(
      groups.map(async (group) => {
        const [workspace, members, bases] = await Promise.all([
          findGroupWorkspace(this.db, group.id),
          listMembers(this.db, group.id),
          listGroupBases(this.db, group.id),
        ]);
        return { group, workspace: workspace!, members, bases };
      }),
    );
  }

  async create(user: AccountUser, input: { name: unknown; owner?: unknown; workspaceId?: unknown }): Promise<BaseListing> {
    const name = checkBaseName(input.name);
    const workspace = await this.targetWorkspace(user, input.owner, input.workspaceId);
    const now = this.clock.now();
    try {
      const id = await this.db.transaction().execute(async (trx) => {
        const base = await repo.insertBase(trx, {
          uuid: newBaseUuid(),
          workspace_id: workspace.id,
          name,
          creator_id: user.id,
          modifier_id: user.id,
          created_at: now,
          updated_at: now,
        });
        await repo.insertMetadata(trx, base.id, defaultMetadataJson());
        await insertBlankBaseRows(trx, base.id, user.virtualId, now);
        return base.id;
      });
      return (await this.access.findInWorkspace(workspace.id, name)) ?? missing(id);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`Table ${name} already exists.`);
      // The workspace went meanwhile (its group, or its owner, deleted).
      if (isForeignKeyViolation(error)) throw notFound(`Workspace ${workspace.id} not found.`);
      throw error;
    }
  }

  /** Where a new base goes: `workspace_id` if given, else `owner`'s (the caller's) personal workspace. */
  private async targetWorkspace(user: AccountUser, owner: unknown, workspaceId: unknown): Promise<WorkspaceRow> {
    if (workspaceId !== undefined && workspaceId !== null && workspaceId !== '') {
      const id = parsePositiveId(workspaceId);
      if (id === null) throw badRequest('workspace_id invalid.');
      const workspace = await this.access.findWorkspace(id);
      if (!workspace) throw notFound(`Workspace ${id} not found.`);
      if (!(await this.access.mayCreateIn(workspace, user.id))) throw permissionDenied();
      return workspace;
    }
    if (owner !== undefined && owner !== null && owner !== '') {
      if (typeof owner !== 'string') throw badRequest('owner invalid.');
      const ownerRow = await this.accounts.findUser(owner);
      if (!ownerRow) throw badRequest('owner invalid.');
      if (ownerRow.id !== user.id) throw permissionDenied();
    }
    return this.personalWorkspace(user.id);
  }

  /**
   * Renames the base and/or, with `toWorkspaceId` (a basegate extension), moves it to another workspace.
   * A move needs what deleting the base needs (REQUIRED.delete) and the right to create bases in the
   * target; those who reached the base only through the workspace it leaves lose access at once.
   */
  async rename(user: AccountUser, workspaceId: string, input: { name: unknown; newName: unknown; toWorkspaceId?: unknown }): Promise<BaseListing> {
    const oldName = typeof input.name === 'string' ? input.name : '';
    if (oldName === '') throw badRequest('name invalid.');
    const moving = input.toWorkspaceId !== undefined && input.toWorkspaceId !== null && input.toWorkspaceId !== '';
    if (moving && parsePositiveId(input.toWorkspaceId) === null) throw badRequest('to_workspace_id invalid.');
    // A move alone keeps the name.
    const newName = moving && (input.newName === undefined || input.newName === null || input.newName === '') ? null : checkBaseName(input.newName, 'new_name');
    const { base } = await this.access.resolve(user, workspaceId, oldName, moving ? REQUIRED.delete : REQUIRED.rename);
    const name = newName ?? base.name;
    const target = moving ? await this.movesOrFail().target(user.id, input.toWorkspaceId, 'to_workspace_id') : undefined;
    const toWorkspace = target && target.id !== base.workspace_id ? target : undefined;
    if (name === base.name && !toWorkspace) return base;
    let losses: AccessLoss[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        const now = this.clock.now();
        // The source workspace first (locked on PostgreSQL), as a group delete takes it.
        const from = toWorkspace ? await this.movesOrFail().lockWorkspace(trx, { id: base.workspace_id }) : undefined;
        if (toWorkspace && !from) throw notFound(`dtable ${oldName} not found.`);
        if (name !== base.name) await repo.renameBase(trx, base.id, name, user.id, now);
        if (!toWorkspace || !from) return;
        const result = await this.movesOrFail().moveIn(trx, [base.id], from, toWorkspace, { userId: user.id, now, trashedToo: false });
        // Moved, trashed or deleted (with its group) by another request meanwhile.
        if (result.moved === 0) throw notFound(`dtable ${oldName} not found.`);
        losses = result.losses;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`Table ${name} already exists.`);
      // The target workspace went meanwhile (its group, or its owner, deleted).
      if (toWorkspace && isForeignKeyViolation(error)) throw notFound(`Workspace ${toWorkspace.id} not found.`);
      throw error;
    }
    if (toWorkspace) await this.movesOrFail().announce(losses);
    for (const listener of this.listeners) await listener(base);
    const workspaceNow = toWorkspace?.id ?? base.workspace_id;
    return (await this.access.findInWorkspace(workspaceNow, name)) ?? missing(base.id);
  }

  private movesOrFail(): BaseMoves {
    if (!this.moves) throw new Error('BasesService: no BaseMoves given (moving bases is not wired)');
    return this.moves;
  }

  async delete(user: AccountUser, workspaceId: string, name: unknown): Promise<void> {
    if (typeof name !== 'string' || name === '') throw badRequest('name invalid.');
    const { base } = await this.access.resolve(user, workspaceId, name, REQUIRED.delete);
    await this.trash.moveToTrash(base);
  }
}

function missing(id: number): never {
  throw new Error(`base ${id} vanished after write`);
}
