import { Type } from 'typebox';

export const BaseParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
});
export const WebhookParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  webhook_id: Type.String({ maxLength: 20 }),
});
export const DeliveryParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  webhook_id: Type.String({ maxLength: 20 }),
  delivery_id: Type.String({ maxLength: 20 }),
});

/** `url` and `secret` arrive as JSON, form or multipart; the service checks them so all three behave alike. */
export const WebhookBody = Type.Record(Type.String(), Type.Unknown());

export const PageQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 20 })),
  per_page: Type.Optional(Type.String({ maxLength: 20 })),
});

const StringList = Type.Union([Type.Array(Type.String()), Type.Null()]);

/** A webhook's subscription (issue 31): which changes it receives. Absent = every change. */
export const SubscriptionRecord = Type.Object({
  tables: StringList,
  columns: StringList,
  events: StringList,
  filters: Type.Union([Type.Array(Type.Unknown()), Type.Null()]),
  filter_conjunction: Type.String(),
  fire_on: Type.String({ description: 'matching | starts_matching' }),
});

export const DryRunBody = Type.Object({ event_id: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ maxLength: 20 })]) });
/** An instant: ISO 8601 with an offset, or epoch seconds (checked by the service). */
const Instant = Type.Union([Type.Number(), Type.String({ maxLength: 40 })]);
export const RedeliverFailedBody = Type.Object({ since: Instant });
export const ReplayBody = Type.Object({ from: Instant, to: Type.Optional(Type.Union([Instant, Type.Null()])) });
export const CountResponse = Type.Object({ count: Type.Integer() });
export const DryRunResponse = Type.Object({
  event_id: Type.Integer(),
  would_send: Type.Boolean(),
  reason: Type.String(),
  message: Type.String(),
  delivery_id: Type.Union([Type.Integer(), Type.Null()]),
  delivery_status: Type.Union([Type.String(), Type.Null()]),
});

export const WebhookRecord = Type.Object({
  subscription: Type.Optional(SubscriptionRecord),
  previous_secret_valid_until: Type.Optional(Type.String()),
  max_rate: Type.Optional(Type.Number({ description: 'deliveries per second at most' })),
  id: Type.Integer(),
  dtable_uuid: Type.String(),
  url: Type.String(),
  creator: Type.String(),
  created_at: Type.String(),
  is_valid: Type.Boolean(),
  settings: Type.Object({ secret: Type.Optional(Type.String({ description: 'always masked' })) }),
});

export const WebhookListResponse = Type.Object({ webhook_list: Type.Array(WebhookRecord) });
export const WebhookResponse = Type.Object({ webhook: WebhookRecord });
export const Success = Type.Object({ success: Type.Boolean() });

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const AttemptRecord = Type.Object({
  attempt: Type.Integer(),
  time: Type.String(),
  url: Type.String(),
  status_code: Nullable(Type.Integer()),
  latency_ms: Type.Integer(),
  outcome: Type.String({ description: 'success | retry | failed | gone' }),
  error: Nullable(Type.String()),
  response_excerpt: Nullable(Type.String()),
  next_attempt_at: Type.String(),
});

export const DeliveryRecord = Type.Object({
  id: Type.Integer(),
  webhook_id: Type.Integer(),
  webhook_msg_id: Type.String(),
  event_id: Nullable(Type.Integer()),
  kind: Type.String({ description: 'event | ping | redelivery' }),
  op_type: Nullable(Type.String()),
  status: Type.String({ description: 'pending | succeeded | failed' }),
  attempt_count: Type.Integer(),
  next_attempt_at: Type.String(),
  created_at: Type.String(),
  completed_at: Type.String(),
  redelivery_of: Nullable(Type.Integer()),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  request_body: Type.String(),
  attempts: Type.Array(AttemptRecord),
});

export const DeliveryListResponse = Type.Object({ delivery_list: Type.Array(DeliveryRecord), total_count: Type.Integer() });
export const DeliveryResponse = Type.Object({ delivery: DeliveryRecord });

export const StatsQuery = Type.Object({ window: Type.Optional(Type.String({ maxLength: 10, description: 'hour (default) | day' })) });
const Percentiles = Type.Object({ p50: Nullable(Type.Integer()), p99: Nullable(Type.Integer()) });
export const StatsResponse = Type.Object({
  webhook_id: Type.Integer(),
  window: Type.String(),
  since: Type.String(),
  deliveries_succeeded: Type.Integer(),
  deliveries_failed: Type.Integer(),
  success_rate: Nullable(Type.Number({ description: 'succeeded / finished, null when none finished' })),
  latency_ms: Percentiles,
  sampled: Type.Boolean({ description: 'true when only the latest finished deliveries of the window were read' }),
  backlog: Type.Integer({ description: 'pending deliveries (counted up to a bound)' }),
  backlog_capped: Type.Boolean(),
  max_rate: Nullable(Type.Number()),
});
