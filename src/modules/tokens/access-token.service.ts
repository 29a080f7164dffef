import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { loadMetadata } from '../rows/index.js';
import { apiError, notFound, permissionDenied } from '../../shared/errors.js';
import { parseAuthorization } from '../../shared/authorization.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';
import type { ExternalLinksService, ShareTarget } from '../workspaces/index.js';
import { REQUIRED, decide, viewShareScope, type BaseAccess, type BaseListing, type BaseTokenGrant } from '../access/index.js';
import type { ApiTokensService } from './api-tokens.service.js';
import type { BaseTokenSigner } from './base-token.js';
import { credentialKey, type CredentialVersions } from './credential-versions.js';
import type { TempApiTokens } from './temp-api-token.js';
import { SameSecond } from './same-second.js';
import { TtlCache } from './ttl-cache.js';

export interface AccessTokenResponse {
  access_token: string;
  dtable_uuid: string;
  dtable_server: string;
  dtable_socket: string;
  dtable_db: string;
  workspace_id: number;
  dtable_name: string;
  app_name?: string;
  use_api_gateway: true;
}

/** The `app_name` of Base-Tokens issued from temporary API-Tokens, as the original names them. */
export const TEMP_TOKEN_APP_NAME = 'scripts';

type BaseFacts = Pick<BaseListing, 'uuid' | 'workspace_id' | 'name'>;
type Grant = Omit<BaseTokenGrant, 'baseUuid' | 'ownerId'>;

export interface AccessTokenDeps {
  db: Db;
  signer: BaseTokenSigner;
  access: BaseAccess;
  accounts: AccountsService;
  apiTokens: ApiTokensService;
  tempTokens: TempApiTokens;
  links: ExternalLinksService;
  versions: CredentialVersions;
  clock: Clock;
  publicUrl: string;
}

/**
 * Issues Base-Tokens from the three credentials (Account-Token, API-Token or temporary
 * API-Token, external link) and renders the contract's access-token response. Each token carries
 * the revocation version of the credential it came from, and that version is always read before
 * the credential itself is checked: a revocation that lands in between then yields a token that is
 * already revoked, never a valid token from a revoked credential.
 */
export class AccessTokenService {
  private readonly ownerIds: TtlCache<number, string>;
  private readonly issued: SameSecond<AccessTokenResponse>;

  constructor(private readonly deps: AccessTokenDeps) {
    this.ownerIds = new TtlCache(deps.clock, 10 * 60_000);
    this.issued = new SameSecond(deps.clock);
  }

  /** From an Account-Token: the user's permission on the base (owner/admin/rw → rw, r → r, none → 403). */
  async forAccount(user: AccountUser, workspaceId: string, baseName: string): Promise<AccessTokenResponse> {
    const base = await this.deps.access.find(workspaceId, baseName);
    return this.forUser(base, user.id, user.virtualId, null, 'account');
  }

  /**
   * From an API-Token or a temporary API-Token in `Authorization: Token|Bearer …`. Anything
   * missing, malformed, unknown, expired or without access is the same 403 `Permission denied.`.
   */
  async forApiCredential(authorization: string | undefined, ip?: string): Promise<AccessTokenResponse> {
    const parsed = parseAuthorization(authorization);
    if (parsed.kind !== 'token') throw permissionDenied();
    const token = parsed.token;
    if (token.includes('.')) return this.forTempApiToken(token);
    // The token and its version come from one statement (see findApiTokenByHash).
    const row = await this.deps.apiTokens.authenticate(token);
    if (!row) throw permissionDenied();
    // Expiry, an old secret past its rotation window, a client outside the allowed networks.
    const refusal = this.deps.apiTokens.refusal(row, ip);
    if (refusal) throw apiError(403, refusal);
    const { tokenPermission } = decide({ kind: 'api-token', permission: row.permission });
    if (!tokenPermission) throw permissionDenied();
    const scope = this.deps.apiTokens.scopeOf(row);
    const notAfter = this.deps.apiTokens.notAfter(row);
    const response = this.issue(
      { uuid: row.base_uuid, workspace_id: row.workspace_id, name: row.base_name },
      {
        permission: tokenPermission,
        username: '',
        appName: row.app_name,
        source: 'api-token',
        sourceId: row.id,
        version: row.version,
        ...(scope ? { scope } : {}),
        ...(row.rate_per_minute !== null ? { ratePerMinute: row.rate_per_minute } : {}),
      },
      row.owner_virtual_id,
      notAfter === undefined ? undefined : Math.floor(notAfter / 1000),
    );
    this.deps.apiTokens.countUse(row.id, ip);
    await this.deps.apiTokens.recordUse(row.id);
    return response;
  }

  /**
   * From an external link, always read-only. A password-protected link takes its password in the
   * `X-Link-Password` header or the `password` query parameter. The Base-Token never outlives the link.
   */
  async forExternalLink(linkToken: string, password: string | null): Promise<AccessTokenResponse> {
    const result = await this.deps.links.check(linkToken, password);
    if (!result.ok) {
      if (result.reason === 'password-required') throw apiError(403, 'Password required.');
      if (result.reason === 'password-wrong') throw apiError(403, 'Password is incorrect.');
      throw notFound(`Token ${linkToken} not found`);
    }
    const { link, base } = result;
    const version = await this.deps.versions.current(credentialKey.externalLink(link.id));
    // The link is known only after the lookup, so look again once the version is read.
    if (!(await this.deps.links.exists(link))) throw notFound(`Token ${linkToken} not found`);
    const { tokenPermission } = decide({ kind: 'external-link' });
    if (!tokenPermission) throw notFound(`Token ${linkToken} not found`);
    const grant: Grant = { permission: tokenPermission, username: 'dtable-web', appName: null, source: 'external-link', sourceId: link.id, version };
    const notAfter = link.expire_at === null ? undefined : Math.floor(link.expire_at / 1000);
    return this.issue(base, grant, await this.ownerVirtualId(base.owner_id), notAfter);
  }

  /**
   * From an Account-Token through a view share (`…/user-view-share-access-token/?user_view_share_id=`,
   * `…/group-view-share-access-token/?group_view_share_id=`): a Base-Token limited to the view (its
   * table, its rows, read or read-write as shared). A share that does not reach the user is 404.
   */
  async forViewShare(user: AccountUser, workspaceId: string, baseName: string, kind: 'user' | 'group', shareId: unknown): Promise<AccessTokenResponse> {
    const id = typeof shareId === 'string' && /^\d{1,15}$/.test(shareId) ? Number(shareId) : null;
    if (id === null) throw apiError(400, `${kind}_view_share_id invalid.`);
    const base = await this.deps.access.find(workspaceId, baseName);
    const version = await this.deps.versions.current(credentialKey.share(base.id, user.id));
    const share = await this.deps.access.viewShareFor(kind, id, base.id, user.id);
    if (!share) throw notFound('View share not found.');
    const table = (await loadMetadata(this.deps.db, base.id)).tables.find((t) => t._id === share.table_id);
    if (!table || !table.views.some((v) => v._id === share.view_id)) throw notFound('View share not found.');
    const permission = share.permission === 'rw' ? 'rw' : 'r';
    const scope = viewShareScope(share.table_id, share.view_id, permission);
    // The table by id and by its present name (requests may name it either way).
    scope.tables = [...new Set([table._id, table.name])];
    const owner = base.owner_id === user.id ? user.virtualId : await this.ownerVirtualId(base.owner_id);
    return this.issue(base, { permission, username: user.virtualId, appName: null, source: 'account', sourceId: user.id, version, scope }, owner);
  }

  /** `GET …/temp-api-token/`: a one-hour token for this base and user (any access to the base). */
  async tempApiToken(user: AccountUser, target: ShareTarget): Promise<{ api_token: string }> {
    const { base } = await this.deps.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.read);
    return { api_token: await this.deps.tempTokens.sign({ baseUuid: base.uuid, username: user.virtualId, userId: user.id }) };
  }

  /** The user's permission is looked up now, so a share removed since the token was made counts. */
  private async forTempApiToken(token: string): Promise<AccessTokenResponse> {
    const claims = await this.deps.tempTokens.verify(token);
    if (!claims) throw permissionDenied();
    const base = await this.deps.access.findByUuid(claims.baseUuid);
    if (!base) throw permissionDenied();
    return this.forUser(base, claims.userId, claims.username, TEMP_TOKEN_APP_NAME, 'temp-api-token');
  }

  /** Version first, then the user's permission (see the class comment). */
  private async forUser(
    base: BaseListing,
    userId: number,
    username: string,
    appName: string | null,
    source: 'account' | 'temp-api-token',
  ): Promise<AccessTokenResponse> {
    const version = await this.deps.versions.current(credentialKey.share(base.id, userId));
    if (source === 'temp-api-token') {
      const user = await this.deps.accounts.findUserById(userId);
      if (!user || user.is_active !== 1 || user.virtual_id !== username) throw permissionDenied();
    }
    const permission = (await this.deps.access.decisionFor(base, userId)).tokenPermission;
    if (!permission) throw permissionDenied();
    const owner = base.owner_id === userId ? username : await this.ownerVirtualId(base.owner_id);
    return this.issue(base, { permission, username, appName, source, sourceId: userId, version }, owner);
  }

  /** The response for a grant; the same grant twice in one second gets the same token (see SameSecond). */
  private issue(base: BaseFacts, grant: Grant, ownerId: string, notAfter?: number): AccessTokenResponse {
    const g = grant;
    const key = JSON.stringify([base.uuid, base.workspace_id, base.name, g.permission, g.username, g.appName, g.source, g.sourceId, g.version, ownerId, notAfter, g.scope, g.ratePerMinute]);
    return this.issued.get(key, () => {
      const { token } = this.deps.signer.sign({ ...grant, baseUuid: base.uuid, ownerId }, notAfter);
      const { publicUrl } = this.deps;
      return {
        access_token: token,
        dtable_uuid: base.uuid,
        dtable_server: `${publicUrl}/api-gateway/`,
        dtable_socket: `${publicUrl}/`,
        dtable_db: `${publicUrl}/dtable-db/`,
        workspace_id: base.workspace_id,
        dtable_name: base.name,
        ...(grant.appName !== null ? { app_name: grant.appName } : {}),
        use_api_gateway: true,
      };
    });
  }

  private ownerVirtualId(ownerId: number): Promise<string> {
    return this.ownerIds.get(ownerId, async () => (await this.deps.accounts.findUserById(ownerId))?.virtual_id ?? '');
  }
}
