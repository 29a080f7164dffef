import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Webhooks and their durable delivery queue.
 * - `webhooks`: per-base hooks; the secret is stored encrypted (it must be usable for signing).
 * - `webhook_deliveries`: one row per (event, webhook), plus pings and redeliveries; the queue the
 *   delivery worker claims from (in id order per webhook) and the delivery log.
 * - `webhook_attempts`: every HTTP attempt of a delivery (status, latency, error, response excerpt).
 * - `webhook_alerts`: "your webhook was disabled" notices for the owner, until an inbox exists.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('webhooks'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('url', 'varchar(2000)', (c) => c.notNull())
    // sha256 of the url: the uniqueness key (a 2000-character url may not fit a btree entry).
    .addColumn('url_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('creator_id', bigint, (c) => c.notNull())
    .addColumn('creator', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('is_valid', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('failure_streak', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('invalid_reason', 'text')
    .addUniqueConstraint('webhooks_base_url_uq', ['base_id', 'url_hash'])
    .execute();

  await withId(db, db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', bigint, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('event_id', bigint)
    // `<webhook>:<event>` for deliveries made from events: a replayed event never queues twice.
    .addColumn('dedupe_key', 'varchar(64)', (c) => c.unique())
    .addColumn('msg_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('op_type', 'varchar(32)')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', bigint, (c) => c.notNull())
    .addColumn('locked_until', bigint)
    .addColumn('claim_token', 'varchar(32)')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('redelivery_of', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('completed_at', bigint)
    .execute();
  // The head of each webhook's queue (MIN(id) of its pending rows) and the log listing.
  await db.schema
    .createIndex('webhook_deliveries_queue_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'status', 'id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_log_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema
    .createIndex('webhook_deliveries_done_idx')
    .on('webhook_deliveries')
    .columns(['status', 'completed_at'])
    .execute();

  await withId(db, db.schema.createTable('webhook_attempts'))
    .addColumn('delivery_id', bigint, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', bigint, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('url', 'varchar(2000)', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('next_attempt_at', bigint)
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'id']).execute();

  await withId(db, db.schema.createTable('webhook_alerts'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('webhook_id', bigint, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('url', 'varchar(2000)', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_alerts_user_idx').on('webhook_alerts').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_alerts', 'webhook_attempts', 'webhook_deliveries', 'webhooks']) {
    await db.schema.dropTable(table).execute();
  }
}
