import type { TokenPermission } from './policy.js';
import type { TokenScope } from './scope.js';

// What a Base-Token carries: the access it grants on one base and the credential it came from.
// Signed and verified by the tokens module; read by the gateway routes through `currentGateway`.

/** Where a Base-Token came from; revocation is checked per source. */
export type BaseTokenSource = 'account' | 'api-token' | 'temp-api-token' | 'external-link';

export interface BaseTokenGrant {
  baseUuid: string;
  permission: TokenPermission;
  /** The user's virtual id for Account-Token grants, `""` for API-Tokens, `dtable-web` for links. */
  username: string;
  /** The workspace owner's virtual id (the original's `owner_id`). */
  ownerId: string;
  appName: string | null;
  source: BaseTokenSource;
  /** Id of the credential it was issued from (user id, API-Token id, link id). */
  sourceId: number;
  /** The credential's revocation version at issue time. */
  version: number;
  /** A scoped API-Token's scope, carried so the Base-Token can never exceed it; absent = unscoped. */
  scope?: TokenScope;
  /** A scoped API-Token's own budget of gateway requests per minute; absent = none of its own. */
  ratePerMinute?: number;
}

export interface BaseTokenClaims extends BaseTokenGrant {
  expiresAt: number; // seconds since the epoch
}
