import type { DialectName, Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { AccountsService } from '../accounts/index.js';
import type { BaseAccess } from '../access/index.js';
import { GroupSharesService } from './group-shares.service.js';
import { GroupsService } from './groups.service.js';
import { AccessRevocation } from './revocation.js';
import { BaseMoves } from './base-moves.js';
import { ViewSharesService } from './view-shares.service.js';
import { groupsInUseOwnedBy, lockGroupsOwnedBy } from './groups.repository.js';
import { badRequest } from '../../shared/errors.js';

export interface GroupsModule {
  groups: GroupsService;
  groupShares: GroupSharesService;
  viewShares: ViewSharesService;
  /** Where the tokens module hooks revocation in (members removed, shares changed, groups deleted). */
  revocation: AccessRevocation;
  /** Moves bases between workspaces (the workspaces module's rename-and-move uses it too). */
  moves: BaseMoves;
}

export function createGroupsModule(deps: { db: Db; dialect: DialectName; clock: Clock; access: BaseAccess; accounts: AccountsService; maxMembers: number }): GroupsModule {
  const { db, clock, access, accounts } = deps;
  const revocation = new AccessRevocation();
  const moves = new BaseMoves(access, revocation, deps.dialect);
  // The owner of a group others use is not deleted (the group, its members and its bases would go by
  // cascade): transfer or delete the group first. A group only its owner uses goes with the owner.
  // In the deletion's transaction the groups and their workspaces are locked first, so a base or member
  // added meanwhile is either seen here or waits and then fails to find its group (PostgreSQL; SQLite
  // runs one transaction at a time).
  accounts.guardUserDeletion(async (userId, login, executor) => {
    if (executor.isTransaction) await lockGroupsOwnedBy(executor, deps.dialect, userId);
    const groups = await groupsInUseOwnedBy(executor, userId);
    if (groups.length > 0) throw badRequest(ownerOfGroupsMessage(login, groups));
  });
  return {
    groups: new GroupsService(db, clock, access, accounts, revocation, moves, deps.maxMembers),
    groupShares: new GroupSharesService(db, clock, access, revocation),
    viewShares: new ViewSharesService(db, clock, access, accounts, revocation),
    revocation,
    moves,
  };
}

/** Shown at most: the names of the groups in the refusal. */
const NAMED_GROUPS = 10;

function ownerOfGroupsMessage(login: string, groups: string[]): string {
  const names = groups.slice(0, NAMED_GROUPS).join(', ') + (groups.length > NAMED_GROUPS ? ` and ${groups.length - NAMED_GROUPS} more` : '');
  return `User ${login} owns groups that hold bases or have other members (${names}): transfer them to another owner or delete them first.`;
}
