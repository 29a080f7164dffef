import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import type { Clock } from '../../shared/clock.js';
import { baseTrashRoutes } from './base-trash.routes.js';
import type { BasesService } from './bases.service.js';
import type { ExternalLinksService } from './external-links.service.js';
import type { SharesService } from './shares.service.js';
import { baseRecord, externalLinkRecord } from './workspaces.present.js';
import {
  BaseParams,
  BaseRecord,
  BaseResponse,
  GroupSharedView,
  CopyResponse,
  ExternalLinkListResponse,
  ExternalLinkRecord,
  LinkParams,
  LooseBody,
  ShareListResponse,
  Success,
  WorkspaceListResponse,
  WorkspaceParams,
} from './workspaces.schemas.js';

export interface WorkspacesRouteDeps {
  bases: BasesService;
  shares: SharesService;
  links: ExternalLinksService;
  clock: Clock;
  publicUrl: string;
}

const account = { auth: 'account' } as const;

export function workspacesRoutes({ bases, shares, links, clock, publicUrl }: WorkspacesRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(baseTrashRoutes(bases.trash));
    app.get('/api/v2.1/workspaces/', { config: account, schema: { tags: ['bases'], response: { 200: WorkspaceListResponse } } }, async (request) => {
      const user = currentAccount(request);
      const { workspace, own, shared, groups } = await bases.listForUser(user);
      return {
        workspace_list: [
          { id: workspace.id, name: 'personal', type: 'personal', owner_name: user.name, table_list: own.map(baseRecord) },
          ...groups.map(({ group, workspace: ws, members, bases: groupBases }) => ({
            id: ws.id,
            name: group.name,
            type: 'group',
            group_id: group.id,
            group_name: group.name,
            group_owner: members.find((m) => m.user_id === group.owner_id)?.virtual_id ?? '',
            group_admins: members.filter((m) => m.is_admin === 1).map((m) => m.virtual_id),
            group_member_count: members.length,
            table_list: groupBases.map(baseRecord),
          })),
          {
            id: '',
            name: 'shared',
            type: 'shared',
            shared_table_list: shared.map((b) => ({
              ...baseRecord(b),
              permission: b.permission,
              from_user: b.from_user,
              from_user_name: b.from_user_name,
            })),
          },
        ],
      };
    });

    app.get(
      '/api/v2.1/dtables/group-shared/',
      { config: account, schema: { tags: ['sharing'], response: { 200: Type.Object({ group_shared_dtables: Type.Record(Type.String(), Type.Array(BaseRecord)) }) } } },
      async (request) => {
        const byGroup = await bases.groupShared(currentAccount(request).id);
        return { group_shared_dtables: Object.fromEntries([...byGroup].map(([gid, list]) => [String(gid), list.map(baseRecord)])) };
      },
    );

    app.get(
      '/api/v2.1/dtables/view-shares-group-shared/',
      { config: account, schema: { tags: ['sharing'], response: { 200: Type.Object({ group_shared_views: Type.Record(Type.String(), Type.Array(GroupSharedView)) }) } } },
      async (request) => {
        const byGroup = await bases.groupSharedViews(currentAccount(request).id);
        const entries = [...byGroup].map(([gid, list]) => [
          String(gid),
          list.map(({ base, share }) => ({
            ...baseRecord(base),
            view_share_id: share.id,
            table_id: share.table_id,
            view_id: share.view_id,
            permission: share.permission,
            shared_name: share.shared_name,
          })),
        ]);
        return { group_shared_views: Object.fromEntries(entries) };
      },
    );

    app.post('/api/v2.1/dtables/', { config: account, schema: { tags: ['bases'], body: LooseBody, response: { 201: BaseResponse } } }, async (request, reply) => {
      const body = request.body ?? {};
      const base = await bases.create(currentAccount(request), { name: body.name, owner: body.owner, workspaceId: body.workspace_id });
      return reply.code(201).send({ table: baseRecord(base) });
    });

    app.post('/api/v2.1/dtable-copy/', { config: account, schema: { tags: ['bases'], body: LooseBody, response: { 200: CopyResponse } } }, async (request) => {
      const base = await bases.copy(currentAccount(request), request.body ?? {});
      return { dtable: baseRecord(base) };
    });

    app.put(
      '/api/v2.1/workspace/:workspace_id/dtable/',
      { config: account, schema: { tags: ['bases'], params: WorkspaceParams, body: LooseBody, response: { 200: BaseResponse } } },
      async (request) => {
        const body = request.body ?? {};
        const base = await bases.rename(currentAccount(request), request.params.workspace_id, { name: body.name, newName: body.new_name, toWorkspaceId: body.to_workspace_id });
        return { table: baseRecord(base) };
      },
    );

    app.delete(
      '/api/v2.1/workspace/:workspace_id/dtable/',
      { config: account, schema: { tags: ['bases'], params: WorkspaceParams, body: LooseBody, response: { 200: Success } } },
      async (request) => {
        const name = request.body?.name ?? (request.query as Record<string, unknown>).name;
        await bases.delete(currentAccount(request), request.params.workspace_id, name);
        return { success: true };
      },
    );

    const sharePath = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/share/';
    const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

    app.get(sharePath, { config: account, schema: { tags: ['sharing'], params: BaseParams, response: { 200: ShareListResponse } } }, async (request) => {
      const rows = await shares.list(currentAccount(request), target(request.params));
      return {
        user_list: rows.map((r) => ({ email: r.virtual_id, name: r.name, contact_email: r.email, avatar_url: '', permission: r.permission })),
      };
    });

    app.post(sharePath, { config: account, schema: { tags: ['sharing'], params: BaseParams, body: LooseBody, response: { 201: Success } } }, async (request, reply) => {
      await shares.add(currentAccount(request), target(request.params), request.body?.email, request.body?.permission);
      return reply.code(201).send({ success: true });
    });

    app.put(sharePath, { config: account, schema: { tags: ['sharing'], params: BaseParams, body: LooseBody, response: { 200: Success } } }, async (request) => {
      await shares.update(currentAccount(request), target(request.params), request.body?.email, request.body?.permission);
      return { success: true };
    });

    app.delete(sharePath, { config: account, schema: { tags: ['sharing'], params: BaseParams, body: LooseBody, response: { 200: Success } } }, async (request) => {
      const email = request.body?.email ?? (request.query as Record<string, unknown>).email;
      await shares.remove(currentAccount(request), target(request.params), email);
      return { success: true };
    });

    const linksPath = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/external-links/';

    app.get(linksPath, { config: account, schema: { tags: ['external links'], params: BaseParams, response: { 200: ExternalLinkListResponse } } }, async (request) => {
      const rows = await links.list(currentAccount(request), target(request.params));
      const now = clock.now();
      return { links: rows.map((l) => externalLinkRecord(l, publicUrl, now)) };
    });

    app.post(linksPath, { config: account, schema: { tags: ['external links'], params: BaseParams, body: LooseBody, response: { 200: ExternalLinkRecord } } }, async (request) => {
      const body = request.body ?? {};
      const { link, token } = await links.create(currentAccount(request), target(request.params), {
        token: body.token,
        password: body.password,
        expireDays: body.expire_days,
      });
      return externalLinkRecord(link, publicUrl, clock.now(), token);
    });

    app.delete(
      `${linksPath}:token/`,
      { config: account, schema: { tags: ['external links'], params: LinkParams, response: { 200: Success } } },
      async (request) => {
        await links.remove(currentAccount(request), target(request.params), request.params.token);
        return { success: true };
      },
    );
  };
}
