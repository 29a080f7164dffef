import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import type { BaseAccess } from '../access/index.js';
import { apiError, badRequest } from '../../shared/errors.js';
import { intParam, timeParam } from '../../shared/query-params.js';
import { isoSeconds } from '../../shared/time.js';
import type { AuditFilter, AuditService } from './audit.service.js';
import type { AuditLogTable } from './audit.table.js';

const tags = ['audit'];
const Str = Type.Optional(Type.String({ maxLength: 255 }));
const Query = Type.Object({ page: Str, per_page: Str, user: Str, email: Str, action: Str, operation: Str, start: Str, end: Str, format: Str });
const BaseParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
type QueryValue = Partial<Record<'page' | 'per_page' | 'user' | 'email' | 'action' | 'operation' | 'start' | 'end' | 'format', string>>;
type Row = Omit<AuditLogTable, 'id'> & { id: number };
const MAX_PER_PAGE = 1000;

function filterOf(q: QueryValue, fixed: AuditFilter = {}): AuditFilter {
  const filter: AuditFilter = { ...fixed };
  const actor = q.user ?? q.email;
  if (actor) filter.actor = actor;
  const action = q.action ?? q.operation;
  if (action) filter.action = action;
  const from = timeParam(q.start, 'start');
  const to = timeParam(q.end, 'end');
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  return filter;
}

function detailOf(row: Row): Record<string, unknown> {
  return JSON.parse(row.detail) as Record<string, unknown>;
}

/** The original's audit-log record, plus the chain fields and our target/ip. */
function auditRecord(row: Row) {
  return {
    id: row.id,
    seq: row.seq,
    username: row.actor,
    name: row.actor,
    operation: row.action,
    org_id: -1,
    org_name: '',
    detail: { target: row.target, ...detailOf(row) },
    ip: row.ip,
    created_at: isoSeconds(row.created_at),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/** `?format=jsonl`: every matching row, oldest first, one JSON object a line, streamed. */
async function sendJsonLines(reply: FastifyReply, audit: AuditService, filter: AuditFilter): Promise<FastifyReply> {
  async function* lines() {
    for await (const row of audit.stream(filter)) yield `${JSON.stringify(auditRecord(row))}\n`;
  }
  return reply.type('application/x-ndjson').header('content-disposition', 'attachment; filename="audit-log.jsonl"').send(Readable.from(lines()));
}




async function page(audit: AuditService, q: QueryValue, filter: AuditFilter) {
  const perPage = intParam(q.per_page, 'per_page', 25, 1, MAX_PER_PAGE);
  const pageNo = intParam(q.page, 'page', 1, 1, 1_000_000);
  return audit.list(filter, (pageNo - 1) * perPage, perPage);
}

function checkFormat(q: QueryValue): boolean {
  if (q.format === undefined || q.format === '' || q.format === 'json') return false;
  if (q.format === 'jsonl') return true;
  throw badRequest('format invalid: json or jsonl.');
}

/** Admin audit and login logs, and a base's own audit log for its owner. */
export function auditRoutes({ audit, access }: { audit: AuditService; access: BaseAccess }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v2.1/admin/audit-logs/', { config: { auth: 'admin' }, schema: { tags, querystring: Query } }, async (request, reply) => {
      const filter = filterOf(request.query);
      if (checkFormat(request.query)) return sendJsonLines(reply, audit, filter);
      const { rows, total } = await page(audit, request.query, filter);
      return { audit_log_list: rows.map(auditRecord), total_count: total };
    });

    app.get('/api/v2.1/admin/logs/login-logs/', { config: { auth: 'admin' }, schema: { tags, querystring: Query } }, async (request, reply) => {
      const filter = { ...filterOf(request.query), actionPrefix: 'login.' };
      if (checkFormat(request.query)) return sendJsonLines(reply, audit, filter);
      const { rows, total } = await page(audit, request.query, filter);
      return {
        login_log_list: rows.map((row) => ({
          login_time: isoSeconds(row.created_at),
          login_ip: row.ip,
          log_success: row.action === 'login.success',
          name: row.actor,
          email: row.actor,
          contact_email: row.actor,
        })),
        total_count: total,
      };
    });

    app.get('/api/v2.1/dtables/:base_uuid/audit-logs/', { config: { auth: 'account' }, schema: { tags, params: BaseParams, querystring: Query } }, async (request, reply) => {
      const base = await access.findByUuid(request.params.base_uuid);
      if (!base) throw apiError(404, 'Base not found.');
      if ((await access.permissionOf(base, currentAccount(request).id)) !== 'owner') throw apiError(403, 'Only the owner of the base can read its audit log.');
      const filter = filterOf(request.query, { baseId: base.id });
      if (checkFormat(request.query)) return sendJsonLines(reply, audit, filter);
      const { rows, total } = await page(audit, request.query, filter);
      return { audit_log_list: rows.map(auditRecord), total_count: total };
    });
  };
}
