import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import type { AutomationRulesService } from './rules.service.js';

/** Records are free-form JSON (the client's trigger and actions); bodies are checked by the service. */
const AnyObject = Type.Object({}, { additionalProperties: true });
const LooseBody = Type.Record(Type.String(), Type.Unknown());
const Success = Type.Object({ success: Type.Boolean() });
const PageQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 32 })),
  per_page: Type.Optional(Type.String({ maxLength: 32 })),
});
const BaseParams = Type.Object({ workspace_id: Type.String({ maxLength: 20 }), base_name: Type.String({ maxLength: 1024 }) });
const RuleParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  automation_rule_id: Type.String({ maxLength: 40 }),
});
const AdminParams = Type.Object({ automation_rule_id: Type.String({ maxLength: 40 }) });

const account = { auth: 'account' } as const;
const admin = { auth: 'admin' } as const;
const tags = ['automations'];
const target = (p: { workspace_id: string; base_name: string }) => ({ workspaceId: p.workspace_id, baseName: p.base_name });

/** `…/automation-rules/` per base, the run log, and the admin operations. */
export function automationRoutes(rules: AutomationRulesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const path = '/api/v2.1/workspace/:workspace_id/dtable/:base_name/automation-rules/';

    app.get(path, { config: account, schema: { tags, params: BaseParams, response: { 200: Type.Object({ dtable_automation_rule_list: Type.Array(AnyObject) }) } } }, async (request) => ({
      dtable_automation_rule_list: await rules.list(currentAccount(request), target(request.params)),
    }));

    app.post(path, { config: account, schema: { tags, params: BaseParams, body: LooseBody, response: { 200: AnyObject } } }, async (request) =>
      rules.create(currentAccount(request), target(request.params), request.body),
    );

    app.put(`${path}:automation_rule_id/`, { config: account, schema: { tags, params: RuleParams, body: LooseBody, response: { 200: AnyObject } } }, async (request) =>
      rules.update(currentAccount(request), target(request.params), request.params.automation_rule_id, request.body),
    );

    app.delete(`${path}:automation_rule_id/`, { config: account, schema: { tags, params: RuleParams, response: { 200: Success } } }, async (request) => {
      await rules.remove(currentAccount(request), target(request.params), request.params.automation_rule_id);
      return { success: true };
    });

    app.get(
      `${path}:automation_rule_id/runs/`,
      { config: account, schema: { tags, params: RuleParams, querystring: PageQuery, response: { 200: Type.Object({ run_list: Type.Array(AnyObject), count: Type.Integer() }) } } },
      async (request) => rules.runs(currentAccount(request), target(request.params), request.params.automation_rule_id, request.query),
    );

    app.get('/api/v2.1/admin/automation-rules/', { config: admin, schema: { tags: ['admin'], querystring: PageQuery } }, async (request) => {
      const { rules: list, count } = await rules.adminList(request.query, false);
      return { automation_rule_list: list, count };
    });

    app.delete('/api/v2.1/admin/automation-rules/:automation_rule_id/', { config: admin, schema: { tags: ['admin'], params: AdminParams, response: { 200: Success } } }, async (request) => {
      await rules.adminDelete(request.params.automation_rule_id);
      return { success: true };
    });

    app.get('/api/v2.1/admin/invalid-automation-rules/', { config: admin, schema: { tags: ['admin'], querystring: PageQuery } }, async (request) => {
      const { rules: list, count } = await rules.adminList(request.query, true);
      return { invalid_automation_rule_list: list, count };
    });

    app.delete('/api/v2.1/admin/invalid-automation-rules/', { config: admin, schema: { tags: ['admin'], response: { 200: Success } } }, async () => {
      await rules.adminDeleteInvalid();
      return { success: true };
    });
  };
}
