import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { AccountsService } from '../accounts/index.js';
import type { BaseAccess } from '../access/index.js';
import { GroupSharesService } from './group-shares.service.js';
import { GroupsService } from './groups.service.js';
import { AccessRevocation } from './revocation.js';
import { ViewSharesService } from './view-shares.service.js';

export interface GroupsModule {
  groups: GroupsService;
  groupShares: GroupSharesService;
  viewShares: ViewSharesService;
  /** Where the tokens module hooks revocation in (members removed, shares changed, groups deleted). */
  revocation: AccessRevocation;
}

export function createGroupsModule(deps: { db: Db; clock: Clock; access: BaseAccess; accounts: AccountsService; maxMembers: number }): GroupsModule {
  const { db, clock, access, accounts } = deps;
  const revocation = new AccessRevocation();
  return {
    groups: new GroupsService(db, clock, access, accounts, revocation, deps.maxMembers),
    groupShares: new GroupSharesService(db, clock, access, revocation),
    viewShares: new ViewSharesService(db, clock, access, accounts, revocation),
    revocation,
  };
}
