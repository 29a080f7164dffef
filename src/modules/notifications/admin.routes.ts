import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { NotificationRulesService } from './rules.service.js';
import { AdminInvalidRuleListResponse, AdminRuleListResponse, AdminRuleParams, PageQuery, Success } from './notifications.schemas.js';

const admin = { auth: 'admin' } as const;
const tags = ['admin'];

/** System-admin rule operations (contract §7); `per_page` is capped at ADMIN_MAX_PER_PAGE. */
export function notificationAdminRoutes(rules: NotificationRulesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v2.1/admin/notification-rules/',
      { config: admin, schema: { tags, querystring: PageQuery, response: { 200: AdminRuleListResponse } } },
      async (request) => {
        const { rules: list, count } = await rules.adminList(request.query, false);
        return { notification_rule_list: list, count };
      },
    );

    app.delete(
      '/api/v2.1/admin/notification-rules/:rule_id/',
      { config: admin, schema: { tags, params: AdminRuleParams, response: { 200: Success } } },
      async (request) => {
        await rules.adminDelete(request.params.rule_id);
        return { success: true };
      },
    );

    app.get(
      '/api/v2.1/admin/invalid-notification-rules/',
      { config: admin, schema: { tags, querystring: PageQuery, response: { 200: AdminInvalidRuleListResponse } } },
      async (request) => {
        const { rules: list, count } = await rules.adminList(request.query, true);
        return { invalid_notification_rule_list: list, count };
      },
    );

    app.delete('/api/v2.1/admin/invalid-notification-rules/', { config: admin, schema: { tags, response: { 200: Success } } }, async () => {
      await rules.adminDeleteInvalid();
      return { success: true };
    });
  };
}
