import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { atLeast, currentGateway, type BaseAccess } from '../access/index.js';
import { baseRecord } from '../workspaces/index.js';
import { badRequest } from '../../shared/errors.js';
import { intParam } from '../../shared/query-params.js';
import type { Snapshots } from './snapshots.js';

const tags = ['snapshots'];
const account = { auth: 'account' } as const;
const BaseParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const ByName = { workspace_id: Type.String({ maxLength: 32 }), base_name: Type.String({ minLength: 1, maxLength: 1024 }) };
const ListParams = Type.Object(ByName);
const CommitParams = Type.Object({ ...ByName, commit_id: Type.String({ minLength: 1, maxLength: 64 }) });
const PageQuery = Type.Object({ page: Type.Optional(Type.String({ maxLength: 20 })), per_page: Type.Optional(Type.String({ maxLength: 20 })) });
const AnyBody = Type.Optional(Type.Record(Type.String(), Type.Unknown()));

function disposition(name: string): string {
  return `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * `POST …/snapshot/` (Base-Token, write), and by workspace and name (Account-Token): `snapshots/` (list,
 * read access), `snapshots/{commit_id}/download/` (ours: the archive, read access) and
 * `snapshots/{commit_id}/restore/` (owner and admins: a new base).
 */
export function snapshotRoutes({ snapshots, access }: { snapshots: Snapshots; access: BaseAccess }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api-gateway/api/v2/dtables/:base_uuid/snapshot/',
      // A snapshot is every table at once: not for a table-scoped token.
      { config: { baseAuth: 'write', scopeAllTables: true }, bodyLimit: 4096, schema: { tags, params: BaseParams, body: AnyBody } },
      async (request) => snapshots.takeOnRequest(currentGateway(request).base),
    );
    const path = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/snapshots/';
    app.get(path, { config: account, schema: { tags, params: ListParams, querystring: PageQuery } }, async (request) => {
      const { base } = await access.resolve(currentAccount(request), request.params.workspace_id, request.params.base_name, 'r');
      const page = intParam(request.query.page, 'page', 1, 1, 100_000);
      const perPage = intParam(request.query.per_page, 'per_page', 25, 1, 100);
      return snapshots.list(base, page, perPage);
    });
    app.get(`${path}:commit_id/download/`, { config: account, schema: { tags, params: CommitParams } }, async (request, reply) => {
      const { base } = await access.resolve(currentAccount(request), request.params.workspace_id, request.params.base_name, 'r');
      const { info, body } = await snapshots.download(base, request.params.commit_id);
      const stamp = new Date(info.created_at).toISOString().slice(0, 10);
      return reply.header('content-type', 'application/x-zip-compressed').header('content-disposition', disposition(`${info.base_name} ${stamp}.dtable`)).send(body);
    });
    app.post(`${path}:commit_id/restore/`, { config: account, bodyLimit: 8192, schema: { tags, params: CommitParams, body: AnyBody } }, async (request) => {
      const user = currentAccount(request);
      const { base, permission } = await access.resolve(user, request.params.workspace_id, request.params.base_name, 'admin');
      const name = request.body?.snapshot_name;
      if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 255)) throw badRequest('snapshot_name invalid.');
      const restored = await snapshots.restore(user, base, atLeast(permission, 'owner'), request.params.commit_id, typeof name === 'string' ? name : undefined);
      return { dtable: baseRecord(restored) };
    });
  };
}
