import fp from 'fastify-plugin';
import type { FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { CommitScope } from '../db/index.js';
import { redact, type AuditEntry, type AuditService, type AuditTxReader, type SnapshotTable } from '../modules/audit/index.js';

/**
 * The audit trail of the HTTP API: which route records which action (issue 33 item 5). One table
 * here instead of a call in each module: the modules stay below `audit` in the layer order, and a
 * route added to the table but missing from the app stops the start (onReady).
 * An audited request runs in a commit scope (db/commit-appendix.ts): its row is appended inside the
 * first transaction of the request that writes, just before that transaction commits, so the change
 * and its row commit together or not at all. A request that wrote nothing (a refused change writes
 * nothing; an export, a sign-in) records once its handler is done, before the response leaves: a
 * successful one only, a sign-in either way.
 */
const W = '/api/v2.1/workspace/:workspace_id/dtable/:base_name';
export const AUDITED_ROUTES: Readonly<Record<string, string>> = {
  'POST /api2/auth-token': 'login',
  'GET /api/v2.1/sso/oidc/callback': 'login',
  'PUT /api/v2.1/user/password': 'account.password_change',
  // Two-factor sign-in and devices
  'POST /api/v2.1/user/two-factor-auth': 'two_factor.enrol_start',
  'PUT /api/v2.1/user/two-factor-auth': 'two_factor.enable',
  'DELETE /api/v2.1/user/two-factor-auth': 'two_factor.disable',
  'POST /api/v2.1/user/two-factor-auth/recovery-codes': 'two_factor.recovery_codes',
  'PUT /api/v2.1/admin/users/:user_id/two-factor-auth': 'admin.two_factor_force',
  'DELETE /api2/two-factor-auth/:user_id': 'admin.two_factor_disable',
  'DELETE /api2/devices': 'account.device_revoke',
  // API-Tokens and temporary API-Tokens
  [`POST ${W}/api-tokens`]: 'api_token.create',
  [`PUT ${W}/api-tokens/:app_name`]: 'api_token.update',
  [`DELETE ${W}/api-tokens/:app_name`]: 'api_token.delete',
  [`POST ${W}/api-tokens/:app_name/rotate`]: 'api_token.rotate',
  [`GET ${W}/temp-api-token`]: 'temp_api_token.create',
  // Shares and external links
  [`POST ${W}/share`]: 'share.create',
  [`PUT ${W}/share`]: 'share.update',
  [`DELETE ${W}/share`]: 'share.delete',
  [`POST ${W}/external-links`]: 'external_link.create',
  [`DELETE ${W}/external-links/:token`]: 'external_link.delete',
  // Webhooks and rules
  [`POST ${W}/webhooks`]: 'webhook.create',
  [`PUT ${W}/webhooks/:webhook_id`]: 'webhook.update',
  [`DELETE ${W}/webhooks/:webhook_id`]: 'webhook.delete',
  [`POST ${W}/webhooks/:webhook_id/rotate-secret`]: 'webhook.rotate_secret',
  [`POST ${W}/notification-rules`]: 'notification_rule.create',
  [`PUT ${W}/notification-rules/:rule_id`]: 'notification_rule.update',
  [`DELETE ${W}/notification-rules/:rule_id`]: 'notification_rule.delete',
  [`POST ${W}/automation-rules`]: 'automation_rule.create',
  [`PUT ${W}/automation-rules/:automation_rule_id`]: 'automation_rule.update',
  [`DELETE ${W}/automation-rules/:automation_rule_id`]: 'automation_rule.delete',
  // Admin actions
  'POST /api/v2.1/admin/users': 'admin.user_create',
  'PUT /api/v2.1/admin/users/:email': 'admin.user_update',
  'DELETE /api/v2.1/admin/users/:email': 'admin.user_delete',
  'PUT /api/v2.1/admin/users/:user_id/reset-password': 'admin.user_reset_password',
  'PUT /api/v2.1/admin/rate-limits/bases/:base_uuid': 'admin.limits_override',
  'DELETE /api/v2.1/admin/rate-limits/bases/:base_uuid': 'admin.limits_override_delete',
  'DELETE /api/v2.1/admin/notification-rules/:rule_id': 'admin.notification_rule_delete',
  'DELETE /api/v2.1/admin/invalid-notification-rules': 'admin.invalid_notification_rules_delete',
  'DELETE /api/v2.1/admin/automation-rules/:automation_rule_id': 'admin.automation_rule_delete',
  'DELETE /api/v2.1/admin/invalid-automation-rules': 'admin.invalid_automation_rules_delete',
  // Bases
  'DELETE /api/v2.1/workspace/:workspace_id/dtable': 'base.delete',
  'POST /api/v2.1/dtable-copy': 'base.copy',
  'GET /api/v2.1/workspace/:workspace_id/synchronous-export/export-dtable': 'base.export',
  'GET /api/v2.1/workspace/:workspace_id/synchronous-export/export-table-to-excel': 'base.export_table',
  'GET /api/v2.1/workspace/:workspace_id/synchronous-export/export-view-to-excel': 'base.export_view',
};

/**
 * Changes whose object the trail reads itself: `before` is read before the handler runs, `after` (of
 * an update) once it has returned — that is, after the change committed — so both are the stored state,
 * not what the client sent. Keyed like AUDITED_ROUTES; `param` names the object's id in the path.
 */
const SNAPSHOTS: Readonly<Record<string, { table: SnapshotTable; param: string }>> = {
  [`PUT ${W}/webhooks/:webhook_id`]: { table: 'webhooks', param: 'webhook_id' },
  [`DELETE ${W}/webhooks/:webhook_id`]: { table: 'webhooks', param: 'webhook_id' },
  [`PUT ${W}/notification-rules/:rule_id`]: { table: 'notification_rules', param: 'rule_id' },
  [`DELETE ${W}/notification-rules/:rule_id`]: { table: 'notification_rules', param: 'rule_id' },
  [`PUT ${W}/automation-rules/:automation_rule_id`]: { table: 'automation_rules', param: 'automation_rule_id' },
  [`DELETE ${W}/automation-rules/:automation_rule_id`]: { table: 'automation_rules', param: 'automation_rule_id' },
  'DELETE /api/v2.1/admin/notification-rules/:rule_id': { table: 'notification_rules', param: 'rule_id' },
  'DELETE /api/v2.1/admin/automation-rules/:automation_rule_id': { table: 'automation_rules', param: 'automation_rule_id' },
};
/**
 * Creates whose `after` is the created object as stored (read in the create's transaction: the row it
 * inserted into this table), else their answer; other creates record the request body (their answers
 * carry credentials in shapes redaction cannot know, e.g. a link URL).
 */
const CREATED_OBJECTS: Readonly<Record<string, SnapshotTable>> = {
  [`POST ${W}/webhooks`]: 'webhooks',
  [`POST ${W}/notification-rules`]: 'notification_rules',
  [`POST ${W}/automation-rules`]: 'automation_rules',
};
/** A created object's `after` is the answer's JSON when it is at most this long (else the request body). */
const MAX_ANSWER_CHARS = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The base an audited request concerns, found before its handler runs (a deleted base is gone after). */
    auditBaseId: number | null;
    /** The changed object as stored before the handler ran (routes in SNAPSHOTS). */
    auditBefore: Record<string, unknown> | undefined;
    /** The request's commit scope (audited changes): its row rides the first transaction that writes. */
    auditScope: CommitScope | null;
  }
}

const routeKey = (method: string, url: string) => `${method} ${url.length > 1 ? url.replace(/\/$/, '') : url}`;

function actionOf(request: FastifyRequest): string | undefined {
  return AUDITED_ROUTES[routeKey(request.method, request.routeOptions.url ?? '')];
}

function snapshotSpecOf(request: FastifyRequest) {
  const spec = SNAPSHOTS[routeKey(request.method, request.routeOptions.url ?? '')];
  if (!spec) return undefined;
  const id = Number((request.params as Record<string, unknown>)[spec.param]);
  return { table: spec.table, id, baseId: request.url.startsWith('/api/v2.1/admin/') ? null : request.auditBaseId };
}

/** The answer to a create, as JSON, when it is a small JSON object (the created object with its id). */
function answerOf(payload: unknown): unknown {
  if (typeof payload !== 'string' || payload.length > MAX_ANSWER_CHARS || !payload.startsWith('{')) return undefined;
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
}

type Loose = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

/** The base named by the route (workspace + base name in the path, body or query; or its uuid). */
function baseRefOf(request: FastifyRequest) {
  const params = (request.params ?? {}) as Loose;
  const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Loose;
  const query = (request.query ?? {}) as Loose;
  const uuid = str(params.base_uuid);
  const workspace = Number(str(params.workspace_id) ?? str(body.src_workspace_id) ?? str(query.workspace_id));
  const name = str(params.base_name) ?? str(body.name) ?? str(query.dtable_name) ?? str(query.name);
  return { uuid, workspaceId: Number.isInteger(workspace) ? workspace : undefined, name };
}

/** The route with its parameters filled in (secret-named ones redacted), e.g. `DELETE …/external-links/[redacted]`. */
function targetOf(request: FastifyRequest): string {
  const params = redact(request.params ?? {}) as Loose;
  const path = (request.routeOptions.url ?? '').replace(/:(\w+)/g, (_, name: string) => String(params[name] ?? `:${name}`));
  return `${request.method} ${path}`;
}

function bodyOf(request: FastifyRequest): unknown {
  const body = request.body;
  return body && typeof body === 'object' && Object.keys(body).length > 0 ? body : undefined;
}

export const auditTrailPlugin = fp<{ audit: AuditService }>(
  async (app, { audit }) => {
    const seen = new Set<string>();
    app.decorateRequest('auditBaseId', null);
    app.decorateRequest('auditBefore', undefined);
    app.decorateRequest('auditScope', null);
    // The hooks go on the audited routes only (as route hooks, after the app's own): every other
    // request — a row read or write through the gateway — passes no hook of the trail.
    app.addHook('onRoute', (route) => {
      let audited = false;
      for (const method of [route.method].flat()) {
        const key = routeKey(method, route.url);
        if (AUDITED_ROUTES[key]) {
          seen.add(key);
          audited = true;
        }
      }
      if (!audited) return;
      route.preHandler = [preHandler, ...[route.preHandler ?? []].flat()];
      route.onSend = [onSend, ...[route.onSend ?? []].flat()];
      route.onResponse = [onResponse, ...[route.onResponse ?? []].flat()];
    });
    app.addHook('onReady', async () => {
      const missing = Object.keys(AUDITED_ROUTES).filter((key) => !seen.has(key));
      if (missing.length > 0) throw new Error(`audit trail names routes the app does not have: ${missing.join(', ')}`);
    });
    // A request that ended without onSend (aborted) ends its scope too.
    const onResponse: onResponseHookHandler = (request, _reply, done) => {
      request.auditScope?.end();
      done();
    };
    const preHandler: preHandlerHookHandler = (request, _reply, done) => {
      const action = actionOf(request);
      if (!action || action === 'login') return done();
      audit
        .baseIdOf(baseRefOf(request))
        .then(async (id) => {
          request.auditBaseId = id;
          const spec = snapshotSpecOf(request);
          if (spec) request.auditBefore = await audit.snapshot(spec.table, spec.id, spec.baseId);
          const scope = new CommitScope();
          scope.appendix = audit.appendix(async (tx) => ({ ...entryOf(request, action), ...(await changeOf(audit, request, { tx })) }));
          request.auditScope = scope;
        })
        .then(
          // The rest of the request — later hooks, the handler and its transactions — runs in the scope
          // (opened only now: the context tracking costs every promise a hook while a scope is open).
          () => request.auditScope!.run(() => done()),
          done,
        );
    };
    const onSend: onSendHookHandler = (request, reply, payload, done) => {
      const action = actionOf(request);
      if (!action) return done();
      const scope = request.auditScope;
      if (scope) {
        // Recorded with the change's commit, or below; no later write of this request may carry the row.
        scope.end();
        if (scope.written) return done();
      }
      const ok = reply.statusCode < 400;
      if (!ok && action !== 'login') return done();
      changeOf(audit, request, { payload })
        .then((change) => {
          const codeAsked = request.headers['x-seafile-otp'] === undefined && reply.getHeader('x-seafile-otp') === 'required';
          const outcome = action !== 'login' ? action : ok ? 'login.success' : codeAsked ? 'login.two_factor_required' : 'login.failed';
          return audit.record({ ...entryOf(request, outcome), ...(action === 'login' ? {} : change) });
        })
        .then(
          () => done(),
          (error: Error) => {
            // The answer of a request that changed nothing: a lost audit row is logged loudly, the answer still goes out.
            request.log.error({ err: error, action }, 'audit record failed');
            done();
          },
        );
    };
  },
  { name: 'audit-trail' },
);

/** Who did `action` on what, from where (`action` is already the outcome of a sign-in). */
function entryOf(request: FastifyRequest, action: string): AuditEntry {
  const login = action.startsWith('login.');
  const body = bodyOf(request) as Loose | undefined;
  return {
    action,
    actor: request.account?.email ?? (login ? (str(body?.username) ?? '') : 'anonymous'),
    ip: request.ip,
    target: login ? (request.routeOptions.url === '/api2/auth-token/' ? 'account' : 'oidc') : targetOf(request),
    baseId: request.auditBaseId,
  };
}

/**
 * `before`/`after` of a successful change: the stored object before and after for the routes in
 * SNAPSHOTS; for a create of those, the created object as stored (else the answer); otherwise what
 * the request sent (`after` of a POST/PUT, `before` of a DELETE naming its object in the body).
 * `tx`: read inside the change's transaction, just before it commits; `payload`: the answer.
 */
async function changeOf(audit: AuditService, request: FastifyRequest, at: { tx?: AuditTxReader; payload?: unknown }): Promise<{ before?: unknown; after?: unknown }> {
  const body = bodyOf(request);
  const spec = snapshotSpecOf(request);
  if (spec) {
    const before = request.auditBefore ?? (request.method === 'DELETE' ? body : undefined);
    const after = request.method === 'PUT' ? await audit.snapshot(spec.table, spec.id, spec.baseId, at.tx) : undefined;
    return { ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
  }
  if (request.method === 'GET') return {};
  if (request.method === 'DELETE') return body ? { before: body } : {};
  const created = CREATED_OBJECTS[routeKey(request.method, request.routeOptions.url ?? '')];
  const createdId = created && at.tx?.insertedId(created);
  const stored = createdId !== undefined ? await audit.snapshot(created!, createdId, request.auditBaseId, at.tx) : undefined;
  const after = stored ?? (created ? answerOf(at.payload) : undefined) ?? body;
  return after !== undefined ? { after } : {};
}
