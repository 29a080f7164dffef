import { sql, type Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Webhook delivery lanes, fairness and crash recovery (issues 16 and 18):
 * - `webhook_deliveries.row_key`: the changed row; deliveries of one row keep their order while other
 *   rows of the same webhook are sent in parallel. Backfilled for queued deliveries whose event is kept.
 * - `webhook_deliveries.lease_owner`: the delivery worker instance holding the lease.
 * - `webhooks.last_claimed_at`: when the webhook last got a sending slot (round-robin order).
 * - `delivery_workers`: a heartbeat per running worker; a lease of a silent worker is taken over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('row_key', 'varchar(64)').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'varchar(64)').execute();
  await db.schema.alterTable('webhooks').addColumn('last_claimed_at', bigint).execute();
  // The webhooks with a queue, found by skipping through this index (cost per webhook with work, not per row).
  await db.schema.createIndex('webhook_deliveries_pending_idx').on('webhook_deliveries').columns(['status', 'webhook_id', 'id']).execute();
  await db.schema
    .createTable('delivery_workers')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('heartbeat_at', bigint, (c) => c.notNull())
    .execute();
  await sql`
    UPDATE webhook_deliveries
       SET row_key = (SELECT e.row_id FROM events e WHERE e.id = webhook_deliveries.event_id)
     WHERE status = 'pending' AND event_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('delivery_workers').execute();
  await db.schema.dropIndex('webhook_deliveries_pending_idx').execute();
  await db.schema.alterTable('webhooks').dropColumn('last_claimed_at').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('lease_owner').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('row_key').execute();
}
