import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Subscriptions (issue 31):
 * - `webhooks.subscription`: the resolved filter of a webhook (tables, columns, events, row filters;
 *   JSON, src/modules/subscriptions); null = every change, as before.
 * - `webhooks.previous_secret` / `previous_secret_until`: the secret replaced by a rotation (sealed
 *   like `secret`), still signing deliveries until that time.
 * - `events_base_idx`, `structure_events_base_idx`: the change feed reads one base's changes after a cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('subscription', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret_until', bigint).execute();
  await db.schema.createIndex('events_base_idx').on('events').columns(['base_id', 'id']).execute();
  await db.schema.createIndex('structure_events_base_idx').on('structure_events').columns(['base_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('structure_events_base_idx').execute();
  await db.schema.dropIndex('events_base_idx').execute();
  await db.schema.alterTable('webhooks').dropColumn('previous_secret_until').execute();
  await db.schema.alterTable('webhooks').dropColumn('previous_secret').execute();
  await db.schema.alterTable('webhooks').dropColumn('subscription').execute();
}
