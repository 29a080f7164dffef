import type { AccountUser } from '../accounts/index.js';
import type { BaseAccess, BaseListing, TokenPermission } from '../workspaces/index.js';
import { REQUIRED, tokenPermissionFor } from '../workspaces/index.js';
import { permissionDenied } from '../../shared/errors.js';
import type { BaseTokenGrant, BaseTokenSigner } from './base-token.js';

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

/** Issues Base-Tokens and renders the contract's access-token response. */
export class AccessTokenService {
  constructor(
    private readonly signer: BaseTokenSigner,
    private readonly access: BaseAccess,
    private readonly publicUrl: string,
  ) {}

  /** A Base-Token from an Account-Token: the user's permission on the base (403 without access). */
  async forAccount(user: AccountUser, workspaceId: string, baseName: string): Promise<AccessTokenResponse> {
    const { base, permission } = await this.access.resolve(user, workspaceId, baseName, REQUIRED.read);
    const tokenPermission = tokenPermissionFor(permission);
    if (!tokenPermission) throw permissionDenied();
    return this.issue(base, {
      permission: tokenPermission,
      username: user.virtualId,
      appName: null,
      source: 'account',
      sourceId: user.id,
      version: 0,
    });
  }

  async issue(base: BaseListing, grant: Omit<BaseTokenGrant, 'baseUuid' | 'ownerId'> & { ownerId?: string }): Promise<AccessTokenResponse> {
    const { token } = await this.signer.sign({ ...grant, baseUuid: base.uuid, ownerId: grant.ownerId ?? '' });
    return {
      access_token: token,
      dtable_uuid: base.uuid,
      dtable_server: `${this.publicUrl}/api-gateway/`,
      dtable_socket: `${this.publicUrl}/`,
      dtable_db: `${this.publicUrl}/dtable-db/`,
      workspace_id: base.workspace_id,
      dtable_name: base.name,
      ...(grant.appName !== null ? { app_name: grant.appName } : {}),
      use_api_gateway: true,
    };
  }
}

export type { TokenPermission };
