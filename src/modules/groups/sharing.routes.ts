import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import type { GroupSharesService } from './group-shares.service.js';
import { viewShareRecord } from './groups.present.js';
import { BaseParams, GroupShareParams, GroupShareRecord, LooseBody, LooseQuery, ShareIdParams, Success, ViewShareParams, ViewShareRecord } from './groups.schemas.js';
import type { ViewShareKind, ViewSharesService } from './view-shares.service.js';

const tags = ['sharing'];
const account = { auth: 'account' } as const;
const base = '/api/v2.1/workspace/:workspace_id/dtable/:base_name';
const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

/** `…/group-shares/`, `…/user-view-shares/`, `…/group-view-shares/` and the recipient's view-share lists. */
export function sharingRoutes(groupShares: GroupSharesService, viewShares: ViewSharesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      `${base}/group-shares/`,
      { config: account, schema: { tags, params: BaseParams, response: { 200: Type.Object({ dtable_group_share_list: Type.Array(GroupShareRecord) }) } } },
      async (request) => ({ dtable_group_share_list: await groupShares.list(currentAccount(request), target(request.params)) }),
    );

    app.post(
      `${base}/group-shares/`,
      {
        config: account,
        schema: {
          tags,
          params: BaseParams,
          body: LooseBody,
          response: {
            200: Type.Object({
              dtable_group_share: Type.Optional(GroupShareRecord),
              success: Type.Array(GroupShareRecord),
              failed: Type.Array(Type.Object({ group_id: Type.Integer(), error_msg: Type.String() })),
            }),
          },
        },
      },
      async (request) => {
        const body = request.body ?? {};
        const result = await groupShares.add(currentAccount(request), target(request.params), body.group_ids ?? body.group_id, body.permission);
        return { ...(result.success[0] ? { dtable_group_share: result.success[0] } : {}), ...result };
      },
    );

    app.put(
      `${base}/group-shares/:group_id/`,
      { config: account, schema: { tags, params: GroupShareParams, body: LooseBody, response: { 200: Success } } },
      async (request) => {
        await groupShares.update(currentAccount(request), target(request.params), request.params.group_id, request.body?.permission);
        return { success: true };
      },
    );

    app.delete(`${base}/group-shares/:group_id/`, { config: account, schema: { tags, params: GroupShareParams, response: { 200: Success } } }, async (request) => {
      await groupShares.remove(currentAccount(request), target(request.params), request.params.group_id);
      return { success: true };
    });

    // ---- view shares, per kind
    for (const kind of ['user', 'group'] as const satisfies readonly ViewShareKind[]) {
      const path = `${base}/${kind}-view-shares/`;
      const listKey = kind === 'user' ? 'user_view_share_list' : 'group_view_share_list';

      app.get(
        path,
        { config: account, schema: { tags, params: BaseParams, querystring: LooseQuery, response: { 200: Type.Object({ [listKey]: Type.Array(ViewShareRecord) }) } } },
        async (request) => {
          const shares = await viewShares.list(currentAccount(request), target(request.params), kind, request.query);
          return { [listKey]: shares.map(viewShareRecord) };
        },
      );

      app.post(
        path,
        {
          config: account,
          schema: {
            tags,
            params: BaseParams,
            body: LooseBody,
            response: { 200: kind === 'user' ? ViewShareRecord : Type.Object({ group_view_share_list: Type.Array(ViewShareRecord) }) },
          },
        },
        async (request) => {
          const user = currentAccount(request);
          if (kind === 'user') return viewShareRecord(await viewShares.addForUser(user, target(request.params), request.body ?? {}));
          return { group_view_share_list: (await viewShares.addForGroups(user, target(request.params), request.body ?? {})).map(viewShareRecord) };
        },
      );

      app.delete(path, { config: account, schema: { tags, params: BaseParams, querystring: LooseQuery, response: { 200: Success } } }, async (request) => {
        await viewShares.removeAllOfView(currentAccount(request), target(request.params), kind, request.query);
        return { success: true };
      });

      app.put(
        `${path}:share_id/`,
        { config: account, schema: { tags, params: ViewShareParams, body: LooseBody, response: { 200: ViewShareRecord } } },
        async (request) => {
          const share = await viewShares.update(currentAccount(request), target(request.params), kind, request.params.share_id, request.body ?? {});
          return viewShareRecord(share);
        },
      );

      app.delete(`${path}:share_id/`, { config: account, schema: { tags, params: ViewShareParams, response: { 200: Success } } }, async (request) => {
        await viewShares.remove(currentAccount(request), target(request.params), kind, request.params.share_id);
        return { success: true };
      });
    }

    // ---- the recipient's side
    app.get(
      '/api/v2.1/dtables/view-shares-user-shared/',
      { config: account, schema: { tags, response: { 200: Type.Object({ view_share_list: Type.Array(ViewShareRecord) }) } } },
      async (request) => ({ view_share_list: (await viewShares.sharedWithUser(currentAccount(request))).map(viewShareRecord) }),
    );

    app.delete('/api/v2.1/dtables/view-shares-user-shared/:share_id/', { config: account, schema: { tags, params: ShareIdParams, response: { 200: Success } } }, async (request) => {
      await viewShares.leave(currentAccount(request), 'user', request.params.share_id);
      return { success: true };
    });

    app.delete('/api/v2.1/dtables/view-shares-group-shared/:share_id/', { config: account, schema: { tags, params: ShareIdParams, response: { 200: Success } } }, async (request) => {
      await viewShares.leave(currentAccount(request), 'group', request.params.share_id);
      return { success: true };
    });
  };
}
