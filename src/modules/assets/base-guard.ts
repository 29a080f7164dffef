import type { AccountUser } from '../accounts/index.js';
import type { AccessTokenService, BaseTokenVerifier } from '../tokens/index.js';
import { atLeast, scopeRefusal, type BaseAccess, type BaseListing, type BasePermission } from '../access/index.js';
import { apiError, notFound, permissionDenied } from '../../shared/errors.js';

/**
 * Which base a request may touch and how: from an API-Token (or temporary API-Token) through the
 * tokens module's own check, or from an Account-Token through the workspace policy.
 */
export class BaseGuard {
  constructor(
    private readonly access: BaseAccess,
    private readonly accessTokens: AccessTokenService,
    private readonly baseTokens: BaseTokenVerifier,
  ) {}

  /** `Authorization: Token|Bearer <API-Token>`; too little permission, or a scope without `files`, is 403. */
  async fromApiToken(authorization: string | undefined, need: BasePermission, ip: string): Promise<BaseListing> {
    const issued = await this.accessTokens.forApiCredential(authorization, ip);
    const check = await this.baseTokens.check(issued.access_token, issued.dtable_uuid);
    if (!check.ok) throw permissionDenied();
    if (!atLeast(check.claims.permission as BasePermission, need)) throw permissionDenied();
    const outOfScope = scopeRefusal(check.claims.scope, { operations: ['files'], ip });
    if (outOfScope) throw apiError(403, outOfScope);
    return check.base;
  }

  /** The uuid of the base an upload link names, if the base still exists. */
  async existing(ref: { id: number } | { uuid: string }): Promise<string | undefined> {
    const base = 'id' in ref ? await this.access.findById(ref.id) : await this.access.findByUuid(ref.uuid);
    return base?.uuid;
  }

  async byUuid(user: AccountUser, uuid: string, need: BasePermission): Promise<BaseListing> {
    const base = await this.access.findByUuid(uuid);
    if (!base) throw notFound(`dtable ${uuid} not found.`);
    if (!atLeast(await this.access.permissionOf(base, user.id), need)) throw permissionDenied();
    return base;
  }

  async byName(user: AccountUser, workspaceId: string, name: string, need: BasePermission): Promise<BaseListing> {
    return (await this.access.resolve(user, workspaceId, name, need)).base;
  }
}
