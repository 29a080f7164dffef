import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { currentAccount } from '../accounts/index.js';
import { currentGateway } from '../access/index.js';
import type { InboxService } from './inbox.service.js';
import {
  AccountNoticeList,
  BaseNoticeList,
  BaseNoticeParams,
  BaseUuidParams,
  LooseBody,
  PageQuery,
  Success,
} from './notifications.schemas.js';

const account = { auth: 'account' } as const;
const gatewayRead = { baseAuth: 'read', scope: 'any' } as const;
const tags = ['notifications'];

/** The user's inbox (`/api/v2.1/notifications/`, contract §5.4) and its per-base view (§8.7). */
export function inboxRoutes(inbox: InboxService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v2.1/notifications/',
      { config: account, schema: { tags, querystring: PageQuery, response: { 200: AccountNoticeList } } },
      async (request) => inbox.list(currentAccount(request), request.query),
    );

    // dtable-web-api sends `notice_type`; every notification is marked seen, as the 2020 server did.
    app.put('/api/v2.1/notifications/', { config: account, schema: { tags, body: LooseBody, response: { 200: Success } } }, async (request) => {
      await inbox.markAllSeen(currentAccount(request));
      return { success: true };
    });

    app.delete('/api/v2.1/notifications/', { config: account, schema: { tags, response: { 200: Success } } }, async (request) => {
      await inbox.deleteAll(currentAccount(request));
      return { success: true };
    });

    app.put('/api/v2.1/notification/', { config: account, schema: { tags, body: LooseBody, response: { 200: Success } } }, async (request) => {
      const noticeId = request.body?.notice_id ?? (request.query as Record<string, unknown>).notice_id;
      await inbox.markOneSeen(currentAccount(request), noticeId);
      return { success: true };
    });

    const basePath = '/api-gateway/api/v2/dtables/:base_uuid/notifications/';

    app.get(
      basePath,
      { config: gatewayRead, schema: { tags, params: BaseUuidParams, querystring: PageQuery, response: { 200: BaseNoticeList } } },
      async (request) => {
        const { claims, base } = currentGateway(request);
        return inbox.listForBase(claims.username, base.id, request.query);
      },
    );

    app.put(
      basePath,
      { config: gatewayRead, schema: { tags, params: BaseUuidParams, body: LooseBody, response: { 200: Success } } },
      async (request) => {
        const { claims, base } = currentGateway(request);
        await inbox.setSeenForBase(claims.username, base.id, request.body?.seen);
        return { success: true };
      },
    );

    app.put(
      `${basePath}:notification_id/`,
      { config: gatewayRead, schema: { tags, params: BaseNoticeParams, body: LooseBody, response: { 200: Success } } },
      async (request) => {
        const { claims, base } = currentGateway(request);
        await inbox.setOneSeenForBase(claims.username, base.id, request.params.notification_id, request.body?.seen);
        return { success: true };
      },
    );

    app.delete(basePath, { config: gatewayRead, schema: { tags, params: BaseUuidParams, response: { 200: Success } } }, async (request) => {
      const { claims, base } = currentGateway(request);
      await inbox.deleteForBase(claims.username, base.id);
      return { success: true };
    });
  };
}
