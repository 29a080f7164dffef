/**
 * Groups (teams): groups with members and roles, one workspace per group, bases shared with groups,
 * and single views shared with users or groups. Who may do what is decided by `access`
 * (`GROUP_REQUIRED`, and the group facts `BaseAccess` gathers); see docs/permissions.md.
 */
export { GroupsService, checkGroupName } from './groups.service.js';
export type { GroupView } from './groups.service.js';
export { GroupSharesService } from './group-shares.service.js';
export { ViewSharesService } from './view-shares.service.js';
export type { ViewShareKind } from './view-shares.service.js';
export { AccessRevocation } from './revocation.js';
export type { AccessLoss } from './revocation.js';
export { BaseMoves } from './base-moves.js';
export type { GroupRow, MemberRow } from './groups.repository.js';
export { listGroupsOf, listMembers, listGroupBases, findGroupWorkspace } from './groups.repository.js';
export { listBasesOfUsersGroups, listViewSharesToUsersGroups } from './shares.repository.js';
export type { ViewShareListing } from './shares.repository.js';
export { groupsRoutes } from './groups.routes.js';
export { sharingRoutes } from './sharing.routes.js';
export { createGroupsModule } from './groups.module.js';
export type { GroupsModule } from './groups.module.js';
