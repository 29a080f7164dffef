import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Executor } from '../../db/index.js';
import { parsePage } from '../../shared/pagination.js';
import { isoMillis, naiveDatetime } from './webhooks.present.js';
import { backlogOf } from './webhooks.repository.js';

const tags = ['admin'];
const MAX_PER_PAGE = 100;

const PageQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 12 })),
  per_page: Type.Optional(Type.String({ maxLength: 12 })),
});
const LastDelivery = Type.Union([
  Type.Object({
    id: Type.Integer(),
    kind: Type.String(),
    status: Type.String(),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    completed_at: Type.String(),
  }),
  Type.Null(),
]);
const WebhookHealth = Type.Object({
  id: Type.Integer(),
  dtable_uuid: Type.String(),
  dtable_name: Type.String(),
  url: Type.String(),
  creator: Type.String(),
  created_at: Type.String(),
  is_valid: Type.Boolean(),
  invalid_reason: Type.Union([Type.String(), Type.Null()]),
  failure_streak: Type.Integer({ description: 'deliveries that failed for good in a row' }),
  failed_count: Type.Integer({ description: 'failed deliveries still in the log' }),
  backlog: Type.Integer({ description: 'deliveries waiting to be sent' }),
  last_delivery: LastDelivery,
});
const HealthList = Type.Object({ webhook_list: Type.Array(WebhookHealth), count: Type.Integer() });

/** Failed deliveries per webhook (still in the log: finished deliveries are pruned after a while). */
async function failedOf(db: Executor, webhookIds: number[]): Promise<Map<number, number>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['webhook_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('webhook_id', 'in', webhookIds)
    .where('status', '=', 'failed')
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.webhook_id), Number(r.n)]));
}

/** The newest finished (succeeded or failed) delivery of each webhook. */
async function lastFinishedOf(db: Executor, webhookIds: number[]) {
  if (webhookIds.length === 0) return new Map();
  const newest = db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('webhook_id', 'in', webhookIds)
    .where('status', '!=', 'pending')
    .groupBy('webhook_id');
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'kind', 'status', 'last_status_code', 'last_error', 'created_at', 'completed_at'])
    .where('id', 'in', newest)
    .execute();
  return new Map(
    rows.map((r) => [
      Number(r.webhook_id),
      {
        id: Number(r.id),
        kind: r.kind,
        status: r.status,
        last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
        last_error: r.last_error,
        created_at: isoMillis(Number(r.created_at)),
        completed_at: isoMillis(r.completed_at === null ? null : Number(r.completed_at)),
      },
    ]),
  );
}

/**
 * `GET /api/v2.1/admin/webhooks/`: every webhook of the system with its health (system admins only),
 * disabled ones first, then by failures in a row, then newest. The secret is never part of it.
 */
export function adminWebhooksRoutes(db: Executor): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v2.1/admin/webhooks/',
      { config: { auth: 'admin' }, schema: { tags, querystring: PageQuery, response: { 200: HealthList } } },
      async (request) => {
        const page = parsePage(request.query, { page: 1, perPage: 25 }, MAX_PER_PAGE);
        const rows = await db
          .selectFrom('webhooks')
          .innerJoin('bases', 'bases.id', 'webhooks.base_id')
          .select([
            'webhooks.id',
            'webhooks.url',
            'webhooks.creator',
            'webhooks.created_at',
            'webhooks.is_valid',
            'webhooks.invalid_reason',
            'webhooks.failure_streak',
            'bases.uuid as base_uuid',
            'bases.name as base_name',
          ])
          // Webhooks of a trashed base are not listed (they come back with the base).
          .where('bases.deleted_at', 'is', null)
          .orderBy('webhooks.is_valid', 'asc')
          .orderBy('webhooks.failure_streak', 'desc')
          .orderBy('webhooks.id', 'desc')
          .offset(page.offset)
          .limit(page.perPage)
          .execute();
        const total = await db
          .selectFrom('webhooks')
          .innerJoin('bases', 'bases.id', 'webhooks.base_id')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('bases.deleted_at', 'is', null)
          .executeTakeFirstOrThrow();
        const ids = rows.map((r) => Number(r.id));
        const [backlog, failed, last] = await Promise.all([backlogOf(db, ids), failedOf(db, ids), lastFinishedOf(db, ids)]);
        return {
          count: Number(total.n),
          webhook_list: rows.map((r) => ({
            id: Number(r.id),
            dtable_uuid: r.base_uuid,
            dtable_name: r.base_name,
            url: r.url,
            creator: r.creator,
            created_at: naiveDatetime(Number(r.created_at)),
            is_valid: Number(r.is_valid) === 1,
            invalid_reason: r.invalid_reason,
            failure_streak: Number(r.failure_streak),
            failed_count: failed.get(Number(r.id)) ?? 0,
            backlog: backlog.get(Number(r.id)) ?? 0,
            last_delivery: last.get(Number(r.id)) ?? null,
          })),
        };
      },
    );
  };
}
