/**
 * Access: what a credential may do on a base, answered in one place. `policy.ts` is the pure decision
 * (`decide`: facts → none/r/rw/admin/owner plus flags; `REQUIRED` per action); `BaseAccess` gathers the
 * facts (base, owner, share) and asks it. How each access path is checked: README.md next to this file.
 */
export * from './policy.js';
export * from './scope.js';
export { BaseAccess, userAccessIn } from './base-access.js';
export type { ResolvedBase } from './base-access.js';
export { anyBaseListingQuery, baseListingQuery, usersWithAccess, viewShareUsers } from './access.repository.js';
export { seesRow } from './row-visibility.js';
export type { SharedView, VisibilityTable } from './row-visibility.js';
export type { BaseListing, BaseRow, UserBases, ViewShareRow, WorkspaceRow } from './access.repository.js';
export type { BaseTokenClaims, BaseTokenGrant, BaseTokenSource } from './credentials.js';
export { currentCaller, currentGateway } from './gateway.js';
export type { Caller, GatewayAccess } from './gateway.js';
