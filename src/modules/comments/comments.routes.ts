import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { currentCaller, currentGateway, atLeast, type BaseAccess, type GatewayAccess } from '../access/index.js';
import { apiError, notFound, permissionDenied } from '../../shared/errors.js';
import { COMMENT_MAX_LENGTH, type CommentAuthor, type CommentBase, type CommentScope, type CommentsService } from './comments.service.js';

const tags = ['comments'];
const GATEWAY = '/api-gateway/api/v2/dtables/:base_uuid';
const BaseParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const CommentParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), comment_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const Body = Type.Record(Type.String(), Type.Unknown());
const ListQuery = Type.Object({
  row_id: Type.Optional(Type.String({ maxLength: 64 })),
  table_id: Type.Optional(Type.String({ maxLength: 64 })),
  start: Type.Optional(Type.String({ maxLength: 12 })),
  limit: Type.Optional(Type.String({ maxLength: 12 })),
});
const Comment = Type.Object({
  id: Type.Integer(),
  author: Type.String(),
  comment: Type.String(),
  dtable_uuid: Type.String(),
  table_id: Type.String(),
  row_id: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  resolved: Type.Integer(),
});
const Success = Type.Object({ success: Type.Boolean() });
// A comment of the maximum length, JSON-escaped, plus the ids.
const bodyLimit = COMMENT_MAX_LENGTH * 6 + 4096;

function gatewayBase(request: FastifyRequest): CommentBase {
  const { base } = currentGateway(request);
  return { id: base.id, uuid: base.uuid };
}

const userOnly = () => apiError(403, 'Only a user can write comments.');

/**
 * Comments have a user as author. A user's Base-Token writes as that user; an API-Token's (which has no
 * user) as the API-Token's creator when the token is read-write and that user is active and still has
 * access to the base (the original's API-Token Base-Token names its creator); external links cannot.
 */
async function authorOf({ claims, base }: GatewayAccess, comments: CommentsService, access: BaseAccess): Promise<CommentAuthor> {
  if ((claims.source === 'account' || claims.source === 'temp-api-token') && claims.username) return { userId: claims.sourceId, virtualId: claims.username };
  if (claims.source !== 'api-token') throw userOnly();
  if (claims.permission !== 'rw') throw apiError(403, "You don't have permission to perform this operation on this base.");
  const creator = await comments.apiTokenAuthor(claims.sourceId);
  if (!creator || !atLeast(await access.permissionOf(base, creator.userId), 'r')) throw userOnly();
  return creator;
}

/** A base the user may read, by uuid (404 unknown, 403 no access). */
async function readableBase(access: BaseAccess, userId: number, uuid: string): Promise<CommentBase> {
  const base = await access.findByUuid(uuid);
  if (!base) throw notFound('dtable not found.');
  if (!atLeast(await access.permissionOf(base, userId), 'r')) throw permissionDenied();
  return { id: base.id, uuid: base.uuid };
}

/**
 * Comments belong to a row of a table: a table-scoped token sees, counts, adds, edits and deletes only
 * those of its tables' rows (listings and counts are filtered; naming a row or comment of another table
 * is 403 naming it). The tables a request names are checked by the Base-Token plugin.
 */
const commentsConfig = { baseAuth: 'read', scope: ['comments'] } as const;

/** A table-scoped Base-Token's tables (undefined for every other caller). */
const scopeOf = (request: FastifyRequest): CommentScope => request.gateway?.claims.scope?.tables;

export interface CommentsRoutesDeps {
  comments: CommentsService;
  access: BaseAccess;
}

/** Row comments under `/api-gateway/…/comments/` (Base-Token) and `/api/v2.1/dtables/{uuid}/comments/` (Account-Token). */
export function commentsRoutes({ comments, access }: CommentsRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${GATEWAY}/comments/`,
      { config: commentsConfig, schema: { tags, params: BaseParams, querystring: ListQuery, response: { 200: Type.Array(Comment) } } },
      async (request) => comments.list(gatewayBase(request), request.query, scopeOf(request)),
    );
    app.get(
      `${GATEWAY}/comments-count/`,
      {
        config: commentsConfig,
        schema: { tags, params: BaseParams, querystring: Type.Object({ row_id: Type.Optional(Type.String({ maxLength: 64 })) }), response: { 200: Type.Object({ count: Type.Integer() }) } },
      },
      async (request) => comments.count(gatewayBase(request), request.query, scopeOf(request)),
    );
    app.get(
      `${GATEWAY}/comments-within-days/`,
      {
        config: commentsConfig,
        schema: { tags, params: BaseParams, querystring: Type.Object({ days: Type.Optional(Type.String({ maxLength: 12 })) }), response: { 200: Type.Object({ comments: Type.Array(Comment) }) } },
      },
      async (request) => comments.withinDays(gatewayBase(request), request.query, scopeOf(request)),
    );
    app.get(
      `${GATEWAY}/comments/:comment_id/`,
      { config: commentsConfig, schema: { tags, params: CommentParams, response: { 200: Comment } } },
      async (request) => comments.get(gatewayBase(request), request.params.comment_id, scopeOf(request)),
    );
    app.post(
      `${GATEWAY}/comments/`,
      { config: commentsConfig, bodyLimit, schema: { tags, params: BaseParams, body: Body, response: { 200: Success } } },
      async (request) => comments.add(gatewayBase(request), await authorOf(currentGateway(request), comments, access), request.body, scopeOf(request)),
    );
    app.put(
      `${GATEWAY}/comments/:comment_id/`,
      { config: commentsConfig, bodyLimit, schema: { tags, params: CommentParams, body: Body, response: { 200: Success } } },
      async (request) => comments.edit(gatewayBase(request), await authorOf(currentGateway(request), comments, access), request.params.comment_id, request.body, scopeOf(request)),
    );
    app.delete(
      `${GATEWAY}/comments/:comment_id/`,
      { config: commentsConfig, schema: { tags, params: CommentParams, response: { 200: Success } } },
      async (request) => comments.remove(gatewayBase(request), await authorOf(currentGateway(request), comments, access), request.params.comment_id, scopeOf(request)),
    );

    // The web-API forms: an Account-Token, or a Base-Token of the base (the original's clients send one).
    app.post(
      '/api/v2.1/dtables/:base_uuid/comments/',
      { config: { auth: 'account', baseToken: 'read', scope: ['comments'] }, bodyLimit, schema: { tags, params: BaseParams, body: Body, response: { 200: Success } } },
      async (request) => {
        const caller = currentCaller(request);
        if (caller.kind === 'base-token') return comments.add(gatewayBase(request), await authorOf(caller.gateway, comments, access), request.body, scopeOf(request));
        const base = await readableBase(access, caller.user.id, request.params.base_uuid);
        return comments.add(base, { userId: caller.user.id, virtualId: caller.user.virtualId }, request.body);
      },
    );
    app.get(
      '/api/v2.1/dtables/:base_uuid/rows-comments-num/',
      { config: { auth: 'account', baseToken: 'read', scope: ['comments'] }, schema: { tags, params: BaseParams, response: { 200: Type.Object({ rows_comments_num: Type.Record(Type.String(), Type.Integer()) }) } } },
      async (request) => {
        const caller = currentCaller(request);
        if (caller.kind === 'base-token') return comments.countPerRow(gatewayBase(request), scopeOf(request));
        return comments.countPerRow(await readableBase(access, caller.user.id, request.params.base_uuid));
      },
    );
  };
}
