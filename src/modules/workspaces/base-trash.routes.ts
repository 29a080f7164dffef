import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest, notFound } from '../../shared/errors.js';
import { normalizeUuid } from '../../shared/ids.js';
import { currentAccount } from '../accounts/index.js';
import type { BaseTrash } from './base-trash.js';

const account = { auth: 'account' } as const;
const admin = { auth: 'admin' } as const;
const tags = ['bases'];
const TrashParams = Type.Object({ base_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const GroupId = Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 });
const GroupTrashParams = Type.Object({ group_id: GroupId });
const GroupTrashBaseParams = Type.Object({ group_id: GroupId, base_uuid: Type.String({ maxLength: 64 }) });
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
    // A group's trash: the bases trashed from its workspace, for the group's owner and admins.
    app.get('/api/v2.1/groups/:group_id/trash-dtables/', { config: account, schema: { tags, params: GroupTrashParams, querystring: PageQuery } }, async (request) => {
      const group = await trash.groupTrash(currentAccount(request), request.params.group_id);
      return trash.list(group, {
        page: whole(request.query.page, 'page', 1, 1_000_000),
        perPage: whole(request.query.per_page, 'per_page', 25, MAX_PER_PAGE),
      });
    });
    app.put('/api/v2.1/groups/:group_id/trash-dtables/:base_uuid/', { config: account, schema: { tags, params: GroupTrashBaseParams } }, async (request) => {
      const group = await trash.groupTrash(currentAccount(request), request.params.group_id);
      const uuid = normalizeUuid(request.params.base_uuid);
      if (uuid === null) throw notFound(`Base ${request.params.base_uuid} not found in the trash.`);
      await trash.restoreByUuid(group, uuid);
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
