import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Each event's webhook body is stored once and referenced by its deliveries (issue 17: 50 webhooks ×
 * 4,000 rows made 200,000 copies). `webhook_deliveries.body` stays for pings and redeliveries and is
 * '' for a delivery with a `payload_id`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('webhook_payloads'))
    .addColumn('event_id', bigint, (c) => c.notNull().unique())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('payload_id', bigint).execute();
  await db.schema.createIndex('webhook_deliveries_payload_idx').on('webhook_deliveries').column('payload_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_payload_idx').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('payload_id').execute();
  await db.schema.dropTable('webhook_payloads').execute();
}
