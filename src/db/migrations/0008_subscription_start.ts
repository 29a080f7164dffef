import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Subscriptions start when they are created (issue 19): webhooks and notification rules remember the
 * outbox position (highest committed event id) at creation and receive only events after it.
 * Existing subscriptions keep 0 (everything retained, as before).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('start_event_id', bigint, (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notification_rules').addColumn('start_event_id', bigint, (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_rules').dropColumn('start_event_id').execute();
  await db.schema.alterTable('webhooks').dropColumn('start_event_id').execute();
}
