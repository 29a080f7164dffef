import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../../plugins/auth.js';
import type { AccessTokenService } from './access-token.service.js';

export const AccessTokenRecord = Type.Object({
  access_token: Type.String(),
  dtable_uuid: Type.String(),
  dtable_server: Type.String(),
  dtable_socket: Type.String(),
  dtable_db: Type.String(),
  workspace_id: Type.Integer(),
  dtable_name: Type.String(),
  app_name: Type.Optional(Type.String()),
  use_api_gateway: Type.Boolean(),
});

const BaseParams = Type.Object({ workspace_id: Type.String({ maxLength: 20 }), base_name: Type.String({ maxLength: 1024 }) });

export function tokensRoutes(accessTokens: AccessTokenService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v2.1/workspace/:workspace_id/dtable/:base_name/access-token/',
      { config: { auth: 'account' }, schema: { tags: ['tokens'], params: BaseParams, response: { 200: AccessTokenRecord } } },
      async (request) => accessTokens.forAccount(currentAccount(request), request.params.workspace_id, request.params.base_name),
    );
  };
}
