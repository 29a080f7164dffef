import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { parseAuthorization } from '../../shared/authorization.js';
import { currentCaller, currentGateway } from '../access/index.js';
import { detailError, permissionDenied } from '../../shared/errors.js';
import type { AccountsService } from '../accounts/index.js';
import type { ApiTokensService } from '../tokens/index.js';
import type { CollaboratorsService } from './collaborators.service.js';

const RelatedUser = Type.Object({
  email: Type.String(),
  name: Type.String(),
  contact_email: Type.String(),
  avatar_url: Type.String(),
  id_in_org: Type.String(),
});
const RelatedUsers = Type.Object({ user_list: Type.Array(RelatedUser), app_user_list: Type.Array(RelatedUser) });
const Departments = Type.Object({ departments: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })) });
const BaseUuidParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const AccountInfo = Type.Object({
  email: Type.String(),
  name: Type.String(),
  login_id: Type.String(),
  contact_email: Type.String(),
  avatar_url: Type.String(),
  institution: Type.String(),
  is_staff: Type.Boolean(),
  org_id: Type.Integer(),
  is_org_staff: Type.Integer(),
  space_usage: Type.String(),
  total: Type.Integer(),
  usage: Type.Integer(),
  row_total: Type.Integer(),
  row_usage: Type.Integer(),
  row_usage_rate: Type.String(),
  enable_chargebee: Type.Boolean(),
  enable_subscription: Type.Boolean(),
  dtable_updates_email_interval: Type.Integer(),
  dtable_collaborate_email_interval: Type.Integer(),
});
const tags = ['collaborators'];

export interface CollaboratorsRoutesDeps {
  collaborators: CollaboratorsService;
  accounts: AccountsService;
  apiTokens: ApiTokensService;
}

/** `account/info`, a base's related users (Base-Token or Account-Token) and `app-user-info` (API-Token). */
export function collaboratorsRoutes({ collaborators, accounts, apiTokens }: CollaboratorsRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api2/account/info/', { config: { auth: 'account' }, schema: { tags, response: { 200: AccountInfo } } }, async (request) => {
      const user = await accounts.findUserById(currentAccount(request).id);
      if (!user) throw detailError(401, 'User inactive or deleted');
      // No quotas or organisations here: the counters the original shows are reported as unlimited/unused.
      return {
        email: user.virtual_id,
        name: user.name,
        login_id: '',
        contact_email: user.email,
        avatar_url: '',
        institution: '',
        is_staff: user.is_staff === 1,
        org_id: -1,
        is_org_staff: 0,
        space_usage: '0%',
        total: -1,
        usage: 0,
        row_total: -1,
        row_usage: 0,
        row_usage_rate: '0%',
        enable_chargebee: false,
        enable_subscription: false,
        dtable_updates_email_interval: 0,
        dtable_collaborate_email_interval: 0,
      };
    });

    app.get(
      '/api-gateway/api/v2/dtables/:base_uuid/related-users/',
      { config: { baseAuth: 'read', scope: 'any' }, schema: { tags, params: Type.Object({ base_uuid: Type.String() }), response: { 200: RelatedUsers } } },
      async (request) => collaborators.forBase(currentGateway(request).base.id),
    );

    // The original's clients (dtable-sdk, the Python SDK) call these with a Base-Token; people with an Account-Token.
    app.get(
      '/api/v2.1/dtables/:base_uuid/related-users/',
      { config: { auth: 'account', baseToken: 'read', scope: 'any' }, schema: { tags, params: BaseUuidParams, response: { 200: RelatedUsers } } },
      async (request) => {
        const caller = currentCaller(request);
        if (caller.kind === 'base-token') return collaborators.forBase(caller.gateway.base.id);
        return collaborators.forAccount(caller.user, request.params.base_uuid);
      },
    );

    // Departments are not modelled (no organisations): every base has none, which is a true answer.
    app.get(
      '/api/v2.1/dtables/:base_uuid/departments/',
      { config: { auth: 'account', baseToken: 'read', scope: 'any' }, schema: { tags, params: BaseUuidParams, response: { 200: Departments } } },
      async (request) => {
        const caller = currentCaller(request);
        if (caller.kind === 'account') await collaborators.forAccount(caller.user, request.params.base_uuid);
        return { departments: [] };
      },
    );

    app.get(
      '/api/v2.1/workspace/:workspace_id/dtable/:base_name/related-users/',
      {
        config: { auth: 'account' },
        schema: { tags, params: Type.Object({ workspace_id: Type.String(), base_name: Type.String() }), response: { 200: RelatedUsers } },
      },
      async (request) => collaborators.forNamedBase(currentAccount(request), request.params.workspace_id, request.params.base_name),
    );

    // API-Token in `Authorization: Token …`; anything else is the same 403 as app-access-token.
    app.get(
      '/api/v2.1/dtable/app-user-info/',
      { schema: { tags, querystring: Type.Object({ username: Type.Optional(Type.String({ maxLength: 255 })) }), response: { 200: RelatedUser } } },
      async (request) => {
        const parsed = parseAuthorization(request.headers.authorization);
        if (parsed.kind !== 'token') throw permissionDenied();
        const token = await apiTokens.authenticate(parsed.token);
        if (!token) throw permissionDenied();
        return collaborators.userOfBase(token.base_id, request.query.username);
      },
    );
  };
}
