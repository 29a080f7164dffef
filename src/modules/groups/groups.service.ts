import type { Db } from '../../db/index.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, apiError, badRequest, notFound, permissionDenied } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountsService, AccountUser, UserRow } from '../accounts/index.js';
import { GROUP_REQUIRED, groupRoleAtLeast, type BaseAccess, type BaseListing, type GroupRole, type WorkspaceRow } from '../access/index.js';
import * as repo from './groups.repository.js';
import type { GroupRow, MemberRow } from './groups.repository.js';
import { lossesOf, type AccessLoss, type AccessRevocation } from './revocation.js';
import type { BaseMoves } from './base-moves.js';

export const MAX_GROUP_NAME_LENGTH = 255;
/** Members one bulk add may name. */
export const MAX_BULK_MEMBERS = 100;
export const MAX_SEARCH_RESULTS = 50;

/** Trimmed group name, or 400: 1–255 characters, no slash, backslash or control character. */
export function checkGroupName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('name invalid.');
  const name = value.trim();
  // eslint-disable-next-line no-control-regex
  if (name === '' || [...name].length > MAX_GROUP_NAME_LENGTH || /[/\\\u0000-\u001f\u007f]/.test(name)) throw badRequest('name invalid.');
  return name;
}

/** A group with the virtual ids of its owner and admins, as the API shows it. */
export interface GroupView {
  group: GroupRow;
  members: MemberRow[];
}

/**
 * Groups: create, rename, transfer, delete; members with roles (owner, admin, member). Who may do what
 * is `access`'s `GROUP_REQUIRED`; a member removed (or a group deleted) loses access to every base the
 * group reaches, and their Base-Tokens on those bases are revoked in the same transaction.
 */
export class GroupsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly accounts: AccountsService,
    private readonly revocation: AccessRevocation,
    private readonly moves: BaseMoves,
    private readonly maxMembers: number,
  ) {}

  async listFor(user: AccountUser): Promise<GroupView[]> {
    const groups = await repo.listGroupsOf(this.db, user.id);
    return Promise.all(groups.map(async (group) => ({ group, members: await repo.listMembers(this.db, group.id) })));
  }

  async create(user: AccountUser, name: unknown): Promise<GroupView> {
    return this.createFor(user.id, name);
  }

  /** The group `id` when `user` has at least `need` in it: unknown → 404, too little → 403. */
  async authorize(user: AccountUser, id: unknown, need: GroupRole): Promise<{ group: GroupRow; role: GroupRole }> {
    const group = await this.find(id);
    const role = await this.access.groupRole(group.id, user.id);
    if (!groupRoleAtLeast(role, need)) throw permissionDenied();
    return { group, role: role! };
  }

  async find(id: unknown): Promise<GroupRow> {
    const groupId = parsePositiveId(id);
    const group = groupId === null ? undefined : await repo.findGroup(this.db, groupId);
    if (!group) throw notFound('Group not found.');
    return group;
  }

  async view(group: GroupRow): Promise<GroupView> {
    return { group, members: await repo.listMembers(this.db, group.id) };
  }

  async get(user: AccountUser, id: unknown): Promise<GroupView> {
    return this.view((await this.authorize(user, id, GROUP_REQUIRED.view)).group);
  }

  /** `PUT /groups/{id}/`: `name` (admins) and/or `owner` (the owner only). */
  async update(user: AccountUser, id: unknown, input: { name?: unknown; owner?: unknown }): Promise<GroupView> {
    const hasName = input.name !== undefined && input.name !== null;
    const hasOwner = input.owner !== undefined && input.owner !== null;
    if (!hasName && !hasOwner) throw badRequest('name or owner required.');
    const { group } = await this.authorize(user, id, hasOwner ? GROUP_REQUIRED.own : GROUP_REQUIRED.manage);
    const name = hasName ? checkGroupName(input.name) : null;
    const newOwner = hasOwner ? await this.user(input.owner, 'owner') : null;
    if (name !== null && name !== group.name) {
      if (await repo.userHasGroupNamed(this.db, user.id, name, group.id)) throw badRequest('There is already a group with that name.');
      await repo.renameGroup(this.db, group.id, name);
    }
    if (newOwner) await this.transfer(group, newOwner);
    return this.view(await this.find(group.id));
  }

  /** `moveBasesTo`: a workspace the caller may create bases in, where the group's bases go (a basegate extension). */
  async delete(user: AccountUser, id: unknown, deleteBases: unknown, moveBasesTo?: unknown): Promise<void> {
    const moving = moveBasesTo !== undefined && moveBasesTo !== null && moveBasesTo !== '';
    if (moving && isTrue(deleteBases)) throw badRequest('Give delete_bases or move_bases_to, not both.');
    if (moving && parsePositiveId(moveBasesTo) === null) throw badRequest('move_bases_to invalid.');
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.own);
    if (!moving) return this.deleteGroup(group, deleteBases);
    const target = await this.moves.target(user.id, moveBasesTo, 'move_bases_to');
    if (target.group_id === group.id) throw badRequest("move_bases_to is the group's own workspace.");
    await this.deleteGroup(group, false, { to: target, userId: user.id });
  }

  async members(user: AccountUser, id: unknown, adminsOnly: boolean): Promise<MemberRow[]> {
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.view);
    const all = await repo.listMembers(this.db, group.id);
    return adminsOnly ? all.filter((m) => m.is_admin === 1) : all;
  }

  async searchMembers(user: AccountUser, id: unknown, q: unknown): Promise<MemberRow[]> {
    if (typeof q !== 'string' || q.trim() === '' || q.length > 255) throw badRequest('q invalid.');
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.view);
    return repo.searchMembers(this.db, group.id, q.trim(), MAX_SEARCH_RESULTS);
  }

  async addMember(user: AccountUser, id: unknown, email: unknown): Promise<MemberRow> {
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.manage);
    return this.add(group, await this.user(email, 'email'));
  }

  /** `POST …/members/bulk/` with `emails` (comma-separated): each added or named in `failed`. */
  async addMembers(user: AccountUser, id: unknown, emails: unknown): Promise<{ success: MemberRow[]; failed: Array<{ email: string; error_msg: string }> }> {
    const list = emailList(emails);
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.manage);
    return this.addMany(group, list);
  }

  async addMany(group: GroupRow, list: string[]) {
    const success: MemberRow[] = [];
    const failed: Array<{ email: string; error_msg: string }> = [];
    for (const email of list) {
      try {
        success.push(await this.add(group, await this.user(email, 'email')));
      } catch (error) {
        if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
        failed.push({ email, error_msg: error.message });
      }
    }
    return { success, failed };
  }

  /** Make or unmake an admin (the group's owner only). */
  async setAdmin(user: AccountUser, id: unknown, login: string, isAdmin: unknown): Promise<MemberRow> {
    const flag = parseFlag(isAdmin, 'is_admin');
    const { group } = await this.authorize(user, id, GROUP_REQUIRED.own);
    return this.setRole(group, login, flag);
  }

  /** Remove a member (admins remove members, the owner removes admins) or leave the group (anyone but its owner). */
  async removeMember(user: AccountUser, id: unknown, login: string): Promise<void> {
    const { group, role } = await this.authorize(user, id, GROUP_REQUIRED.view);
    const member = await this.member(group, login);
    if (member.user_id !== user.id) {
      const need: GroupRole = member.is_admin === 1 ? GROUP_REQUIRED.own : GROUP_REQUIRED.manage;
      if (!groupRoleAtLeast(role, need)) throw permissionDenied();
    }
    await this.remove(group, member);
  }

  // ---- the operations themselves, once the caller is authorized (also used by the admin routes)

  async createFor(ownerId: number, nameInput: unknown): Promise<GroupView> {
    const name = checkGroupName(nameInput);
    if (await repo.userHasGroupNamed(this.db, ownerId, name)) throw badRequest('There is already a group with that name.');
    const group = await this.db.transaction().execute((trx) => repo.insertGroup(trx, name, ownerId, this.clock.now()));
    return this.view(group);
  }

  async transfer(group: GroupRow, newOwner: UserRow): Promise<void> {
    if (newOwner.id === group.owner_id) throw badRequest(`User ${newOwner.virtual_id} is already group owner.`);
    if (newOwner.is_active !== 1) throw badRequest(`User ${newOwner.virtual_id} is not active.`);
    await this.db.transaction().execute(async (trx) => {
      const member = await repo.findMember(trx, group.id, newOwner.id);
      if (!member) await repo.insertMember(trx, group.id, newOwner.id, this.clock.now());
      await repo.transferGroup(trx, group.id, newOwner.id);
    });
  }

  /**
   * Refused while the group's workspace holds bases, unless `deleteBases` is true: then they go with it
   * (not to the trash); or unless `move` names a workspace: then all of them, trashed ones too, move there
   * first, in the same transaction (a live base's name taken there refuses the whole call with 400).
   */
  async deleteGroup(group: GroupRow, deleteBases: unknown, move?: { to: WorkspaceRow; userId: number }): Promise<void> {
    const withBases = isTrue(deleteBases);
    const bases = await repo.listGroupBases(this.db, group.id);
    if (bases.length > 0 && !withBases && !move) throw badRequest('Cannot delete group with bases');
    let uuids: string[] = [];
    let losses: AccessLoss[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        const from = await this.moves.lockWorkspace(trx, { groupId: group.id });
        const reached = await this.access.basesOfGroup(group.id, trx);
        const members = await repo.memberIds(trx, group.id);
        const own = await trx
          .selectFrom('bases')
          .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
          .select(['bases.id', 'bases.uuid', 'bases.name', 'bases.deleted_at'])
          .where('workspaces.group_id', '=', group.id)
          .execute();
        uuids = own.map((r) => r.uuid);
        let moved = new Set<number>();
        let moveLosses: AccessLoss[] = [];
        if (move) {
          const clash = await this.moves.clashingName(trx, own.filter((b) => b.deleted_at === null).map((b) => b.name), move.to.id);
          if (clash !== undefined) throw badRequest(`Table ${clash} already exists in workspace ${move.to.id}.`);
          moved = new Set(own.map((b) => Number(b.id)));
          // A base moved out meanwhile by another request is simply not among those moved here.
          if (from) moveLosses = (await this.moves.moveIn(trx, [...moved], from, move.to, { userId: move.userId, now: this.clock.now(), trashedToo: true })).losses;
        }
        // The moved bases' losses were counted by the move (members who reach the target keep them).
        const groupLosses = lossesOf(reached.filter((b) => !moved.has(b)), members);
        await this.revocation.revokeIn(trx, groupLosses);
        losses = [...groupLosses, ...moveLosses];
        await repo.deleteGroup(trx, group.id);
      });
    } catch (error) {
      // The target workspace went meanwhile (its group, or its owner, deleted).
      if (move && isForeignKeyViolation(error)) throw notFound(`Workspace ${move.to.id} not found.`);
      if (move && isUniqueViolation(error)) throw badRequest(`A base of group ${group.name} has a name already taken in workspace ${move.to.id}.`);
      throw error;
    }
    await this.revocation.announce(losses);
    await this.revocation.basesGone(uuids);
  }

  async add(group: GroupRow, user: UserRow): Promise<MemberRow> {
    if (user.is_active !== 1) throw badRequest(`User ${user.email} is not active.`);
    try {
      await this.db.transaction().execute(async (trx) => {
        if (await repo.findMember(trx, group.id, user.id)) throw badRequest(`User ${user.email} is already a group member.`);
        if ((await repo.countMembers(trx, group.id)) >= this.maxMembers) {
          throw badRequest(`The group cannot have more than ${this.maxMembers} members.`);
        }
        await repo.insertMember(trx, group.id, user.id, this.clock.now());
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw badRequest(`User ${user.email} is already a group member.`);
      // The group (or the user) went meanwhile.
      if (isForeignKeyViolation(error)) throw notFound(`Group ${group.id} not found.`);
      throw error;
    }
    return (await repo.findMember(this.db, group.id, user.id))!;
  }

  async setRole(group: GroupRow, login: string, isAdmin: boolean): Promise<MemberRow> {
    const member = await this.member(group, login);
    if (member.user_id === group.owner_id) throw badRequest('The role of the group owner cannot be changed.');
    await repo.setMemberAdmin(this.db, group.id, member.user_id, isAdmin);
    return (await repo.findMember(this.db, group.id, member.user_id))!;
  }

  /** Removes the member and, in the same transaction, revokes their Base-Tokens on every base the group reaches. */
  async remove(group: GroupRow, member: MemberRow): Promise<void> {
    if (member.user_id === group.owner_id) throw badRequest('The group owner cannot leave the group; transfer it first.');
    let losses: ReturnType<typeof lossesOf> = [];
    await this.db.transaction().execute(async (trx) => {
      if (!(await repo.deleteMember(trx, group.id, member.user_id))) throw notFound(`Member ${member.email} not found.`);
      losses = lossesOf(await this.access.basesOfGroup(group.id, trx), [member.user_id]);
      await this.revocation.revokeIn(trx, losses);
    });
    await this.revocation.announce(losses);
  }

  async member(group: GroupRow, login: string): Promise<MemberRow> {
    const user = await this.user(login, 'email');
    const member = await repo.findMember(this.db, group.id, user.id);
    if (!member) throw notFound(`Member ${login} not found.`);
    return member;
  }

  listAll(offset: number, limit: number, name?: string): Promise<GroupRow[]> {
    return repo.listAllGroups(this.db, offset, limit, name);
  }

  bases(group: GroupRow): Promise<BaseListing[]> {
    return repo.listGroupBases(this.db, group.id);
  }

  membersOf(group: GroupRow): Promise<MemberRow[]> {
    return repo.listMembers(this.db, group.id);
  }

  /** A user named by e-mail or virtual id, or 404 (400 when the value is no text). */
  async user(value: unknown, field: string): Promise<UserRow> {
    if (typeof value !== 'string' || value.trim() === '' || value.length > 255) throw badRequest(`${field} invalid.`);
    const row = await this.accounts.findUser(value.trim());
    if (!row) throw notFound(`User ${value.trim()} not found.`);
    return row;
  }
}

function emailList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : null;
  if (!items) throw badRequest('emails invalid.');
  const list = [...new Set(items.map((e) => (typeof e === 'string' ? e.trim() : '')).filter((e) => e !== ''))];
  if (list.length === 0) throw badRequest('emails invalid.');
  if (list.length > MAX_BULK_MEMBERS) throw apiError(400, `At most ${MAX_BULK_MEMBERS} members can be added at once.`);
  return list;
}

/** `true`/`false` as a boolean or its text (forms send text). */
export function parseFlag(value: unknown, field: string): boolean {
  if (value === true || value === 'true' || value === 'True' || value === '1' || value === 1) return true;
  if (value === false || value === 'false' || value === 'False' || value === '0' || value === 0) return false;
  throw badRequest(`${field} invalid.`);
}

function isTrue(value: unknown): boolean {
  return value === true || value === 'true' || value === '1';
}
