import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import type { AccessTokenService } from './access-token.service.js';
import type { ApiTokensService } from './api-tokens.service.js';
import {
  AccessTokenRecord,
  ApiTokenList,
  ApiTokenParams,
  ApiTokenRecord,
  BaseParams,
  ExternalLinkParams,
  ExternalLinkQuery,
  LooseBody,
  LooseQuery,
  Success,
  TempApiTokenResponse,
} from './tokens.schemas.js';

export interface TokensRouteDeps {
  accessTokens: AccessTokenService;
  apiTokens: ApiTokensService;
}

const account = { auth: 'account' } as const;
const tags = ['tokens'];
const base = '/api/v2.1/workspace/:workspace_id/dtable/:base_name';
const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

/** API-Tokens, temporary API-Tokens and the three ways to a Base-Token (contract §3–§4). */
export function tokensRoutes({ accessTokens, apiTokens }: TokensRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${base}/access-token/`,
      { config: account, schema: { tags, params: BaseParams, response: { 200: AccessTokenRecord } } },
      async (request) => accessTokens.forAccount(currentAccount(request), request.params.workspace_id, request.params.base_name),
    );

    for (const kind of ['user', 'group'] as const) {
      app.get(
        `${base}/${kind}-view-share-access-token/`,
        { config: account, schema: { tags, params: BaseParams, querystring: LooseQuery, response: { 200: AccessTokenRecord } } },
        async (request) => {
          const { workspace_id, base_name } = request.params;
          return accessTokens.forViewShare(currentAccount(request), workspace_id, base_name, kind, request.query[`${kind}_view_share_id`]);
        },
      );
    }

    app.get(
      '/api/v2.1/dtable/app-access-token/',
      { schema: { tags, response: { 200: AccessTokenRecord } } },
      async (request) => accessTokens.forApiCredential(request.headers.authorization, request.ip),
    );

    app.get(
      '/api/v2.1/external-link-tokens/:external_link_token/access-token/',
      { schema: { tags, params: ExternalLinkParams, querystring: ExternalLinkQuery, response: { 200: AccessTokenRecord } } },
      async (request) => {
        const header = request.headers['x-link-password'];
        const password = typeof header === 'string' ? header : (request.query.password ?? null);
        return accessTokens.forExternalLink(request.params.external_link_token, password);
      },
    );

    app.get(
      `${base}/temp-api-token/`,
      { config: account, schema: { tags, params: BaseParams, response: { 200: TempApiTokenResponse } } },
      async (request) => accessTokens.tempApiToken(currentAccount(request), target(request.params)),
    );

    app.get(
      `${base}/api-tokens/`,
      { config: account, schema: { tags, params: BaseParams, response: { 200: ApiTokenList } } },
      async (request) => ({ api_tokens: await apiTokens.list(currentAccount(request), target(request.params)) }),
    );

    app.post(
      `${base}/api-tokens/`,
      { config: account, schema: { tags, params: BaseParams, body: LooseBody, response: { 201: ApiTokenRecord } } },
      async (request, reply) => {
        const body = request.body ?? {};
        const record = await apiTokens.create(currentAccount(request), target(request.params), {
          appName: body.app_name,
          permission: body.permission,
          body,
        });
        return reply.code(201).send(record);
      },
    );

    app.put(
      `${base}/api-tokens/:app_name/`,
      { config: account, schema: { tags, params: ApiTokenParams, body: LooseBody, response: { 200: ApiTokenRecord } } },
      async (request) =>
        apiTokens.update(currentAccount(request), target(request.params), request.params.app_name, request.body ?? {}),
    );

    // Issue 33: a new secret; the old one stays valid for `overlap_seconds`.
    app.post(
      `${base}/api-tokens/:app_name/rotate/`,
      { config: account, schema: { tags, params: ApiTokenParams, body: Type.Optional(LooseBody), response: { 200: ApiTokenRecord } } },
      async (request) =>
        apiTokens.rotate(currentAccount(request), target(request.params), request.params.app_name, request.body?.overlap_seconds),
    );

    app.delete(
      `${base}/api-tokens/:app_name/`,
      { config: account, schema: { tags, params: ApiTokenParams, response: { 200: Success } } },
      async (request) => {
        await apiTokens.remove(currentAccount(request), target(request.params), request.params.app_name);
        return { success: true };
      },
    );
  };
}
