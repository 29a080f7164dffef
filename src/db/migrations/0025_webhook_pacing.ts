import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Per-receiver pacing and delivery statistics (issue 31, item 7):
 * - `webhooks.max_rate`: deliveries per second at most (null: unpaced, as before).
 * - `webhooks.paced_until`: when the webhook's token bucket next allows a delivery (the claim skips
 *   the webhook until then; its deliveries wait in the queue).
 * - `webhook_deliveries_completed_idx`: the statistics read one webhook's latest finished deliveries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('max_rate', 'double precision').execute();
  await db.schema.alterTable('webhooks').addColumn('paced_until', bigint).execute();
  await db.schema.createIndex('webhook_deliveries_completed_idx').on('webhook_deliveries').columns(['webhook_id', 'completed_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_completed_idx').execute();
  await db.schema.alterTable('webhooks').dropColumn('paced_until').execute();
  await db.schema.alterTable('webhooks').dropColumn('max_rate').execute();
}
