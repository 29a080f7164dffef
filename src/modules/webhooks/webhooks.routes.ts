import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { currentAccount } from '../accounts/index.js';
import { parsePage } from '../../shared/pagination.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  BaseParams,
  CountResponse,
  DeliveryListResponse,
  DeliveryParams,
  DeliveryResponse,
  DryRunBody,
  DryRunResponse,
  PageQuery,
  RedeliverFailedBody,
  ReplayBody,
  StatsQuery,
  StatsResponse,
  Success,
  WebhookBody,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
} from './webhooks.schemas.js';

const config = { auth: 'account' } as const;
const tags = ['webhooks'];
const base = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/webhooks/';
const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

/** Webhook CRUD (contract §6) plus the delivery log and statistics, redeliver, replay and ping. */
export function webhooksRoutes(webhooks: WebhooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(base, { config, schema: { tags, params: BaseParams, response: { 200: WebhookListResponse } } }, async (request) => ({
      webhook_list: await webhooks.list(currentAccount(request), target(request.params)),
    }));

    app.post(
      base,
      { config, schema: { tags, params: BaseParams, body: WebhookBody, response: { 200: WebhookResponse } } },
      async (request) => ({ webhook: await webhooks.create(currentAccount(request), target(request.params), request.body ?? {}) }),
    );

    app.put(
      `${base}:webhook_id/`,
      { config, schema: { tags, params: WebhookParams, body: WebhookBody, response: { 200: WebhookResponse } } },
      async (request) => ({
        webhook: await webhooks.update(currentAccount(request), target(request.params), request.params.webhook_id, request.body ?? {}),
      }),
    );

    app.delete(`${base}:webhook_id/`, { config, schema: { tags, params: WebhookParams, response: { 200: Success } } }, async (request) => {
      await webhooks.remove(currentAccount(request), target(request.params), request.params.webhook_id);
      return { success: true };
    });

    app.get(
      `${base}:webhook_id/deliveries/`,
      { config, schema: { tags, params: WebhookParams, querystring: PageQuery, response: { 200: DeliveryListResponse } } },
      async (request) =>
        webhooks.deliveries(currentAccount(request), target(request.params), request.params.webhook_id, parsePage(request.query)),
    );

    app.get(
      `${base}:webhook_id/stats/`,
      { config, schema: { tags, params: WebhookParams, querystring: StatsQuery, response: { 200: StatsResponse } } },
      async (request) => webhooks.stats(currentAccount(request), target(request.params), request.params.webhook_id, request.query.window),
    );

    app.post(
      `${base}:webhook_id/deliveries/:delivery_id/redeliver/`,
      { config, schema: { tags, params: DeliveryParams, response: { 200: DeliveryResponse } } },
      async (request) => ({
        delivery: await webhooks.redeliver(currentAccount(request), target(request.params), request.params.webhook_id, request.params.delivery_id),
      }),
    );

    // Replay (issue 31): both queue in the lane behind live deliveries and answer how many.
    app.post(
      `${base}:webhook_id/redeliver/`,
      { config, schema: { tags, params: WebhookParams, body: RedeliverFailedBody, response: { 200: CountResponse } } },
      async (request) => webhooks.redeliverFailed(currentAccount(request), target(request.params), request.params.webhook_id, request.body),
    );

    app.post(
      `${base}:webhook_id/replay/`,
      { config, schema: { tags, params: WebhookParams, body: ReplayBody, response: { 200: CountResponse } } },
      async (request) => webhooks.replay(currentAccount(request), target(request.params), request.params.webhook_id, request.body),
    );

    app.post(
      `${base}:webhook_id/rotate-secret/`,
      { config, schema: { tags, params: WebhookParams, body: WebhookBody, response: { 200: WebhookResponse } } },
      async (request) => ({
        webhook: await webhooks.rotateSecret(currentAccount(request), target(request.params), request.params.webhook_id, request.body ?? {}),
      }),
    );

    app.post(
      `${base}:webhook_id/dry-run/`,
      { config, schema: { tags, params: WebhookParams, body: DryRunBody, response: { 200: DryRunResponse } } },
      async (request) => webhooks.dryRun(currentAccount(request), target(request.params), request.params.webhook_id, request.body),
    );

    app.post(
      `${base}:webhook_id/ping/`,
      { config, schema: { tags, params: WebhookParams, response: { 200: DeliveryResponse } } },
      async (request) => ({ delivery: await webhooks.ping(currentAccount(request), target(request.params), request.params.webhook_id) }),
    );
  };
}
