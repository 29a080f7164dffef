import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { currentAccount } from '../accounts/index.js';
import type { NotificationRulesService } from './rules.service.js';
import { LooseBody, RuleListResponse, RuleParams, RuleRecord, RulesParams, Success } from './notifications.schemas.js';

const account = { auth: 'account' } as const;
const tags = ['notification rules'];
const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

/** `/api/v2.1/workspace/{workspace_id}/dtable/{base_name}/notification-rules/` (contract §5). */
export function notificationRulesRoutes(rules: NotificationRulesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const path = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/notification-rules/';

    app.get(path, { config: account, schema: { tags, params: RulesParams, response: { 200: RuleListResponse } } }, async (request) => ({
      dtable_notification_rule_list: await rules.list(currentAccount(request), target(request.params)),
    }));

    app.post(path, { config: account, schema: { tags, params: RulesParams, body: LooseBody, response: { 200: RuleRecord } } }, async (request) =>
      rules.create(currentAccount(request), target(request.params), request.body),
    );

    app.put(
      `${path}:rule_id/`,
      { config: account, schema: { tags, params: RuleParams, body: LooseBody, response: { 200: RuleRecord } } },
      async (request) => rules.update(currentAccount(request), target(request.params), request.params.rule_id, request.body),
    );

    app.delete(`${path}:rule_id/`, { config: account, schema: { tags, params: RuleParams, response: { 200: Success } } }, async (request) => {
      await rules.remove(currentAccount(request), target(request.params), request.params.rule_id);
      return { success: true };
    });
  };
}
