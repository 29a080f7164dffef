import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest } from '../../shared/errors.js';
import { currentAccount } from '../accounts/index.js';
import type { BaseTrash } from './base-trash.js';

const account = { auth: 'account' } as const;
const admin = { auth: 'admin' } as const;
const tags = ['bases'];
const TrashParams = Type.Object({ base_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const PageQuery = Type.Object({ page: Type.Optional(Type.String({ maxLength: 10 })), per_page: Type.Optional(Type.String({ maxLength: 10 })) });
const MAX_PER_PAGE = 100;

function whole(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > max) throw badRequest(`${name} invalid: a whole number from 1 to ${max}.`);
  return Number(value);
}

/** `trash-dtables/`: the signed-in user's deleted bases — list, restore, delete for good, empty. */
export function baseTrashRoutes(trash: BaseTrash): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v2.1/trash-dtables/', { config: account, schema: { tags, querystring: PageQuery } }, async (request) =>
      trash.list(currentAccount(request), {
        page: whole(request.query.page, 'page', 1, 1_000_000),
        perPage: whole(request.query.per_page, 'per_page', 25, MAX_PER_PAGE),
      }),
    );
    app.delete('/api/v2.1/trash-dtables/', { config: account, schema: { tags } }, async (request) => {
      await trash.clear(currentAccount(request));
      return { success: true };
    });
    app.put('/api/v2.1/trash-dtables/:base_id/', { config: account, schema: { tags, params: TrashParams } }, async (request) => {
      await trash.restore(currentAccount(request), request.params.base_id);
      return { success: true };
    });
    // Not in the original's documents (it empties the whole trash only): one base for good.
    app.delete('/api/v2.1/trash-dtables/:base_id/', { config: account, schema: { tags, params: TrashParams } }, async (request) => {
      await trash.purge(currentAccount(request), request.params.base_id);
      return { success: true };
    });
    // The system admin's view: every user's trashed bases (with their owner), restore; purge one (ours).
    app.get('/api/v2.1/admin/trash-dtables/', { config: admin, schema: { tags, querystring: PageQuery } }, async (request) =>
      trash.list(null, {
        page: whole(request.query.page, 'page', 1, 1_000_000),
        perPage: whole(request.query.per_page, 'per_page', 25, MAX_PER_PAGE),
      }),
    );
    app.put('/api/v2.1/admin/trash-dtables/:base_id/', { config: admin, schema: { tags, params: TrashParams } }, async (request) => {
      await trash.restore(null, request.params.base_id);
      return { success: true };
    });
    app.delete('/api/v2.1/admin/trash-dtables/:base_id/', { config: admin, schema: { tags, params: TrashParams } }, async (request) => {
      await trash.purge(null, request.params.base_id);
      return { success: true };
    });
  };
}
