import type { Kysely } from 'kysely';

/**
 * Replays (issue 31): `webhook_deliveries.priority` puts bulk redeliveries and replays of past
 * changes in a lane behind live deliveries (0 = live, 1 = replay); the index serves each webhook's
 * pending queue in (priority, id) order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('webhook_deliveries_lane_idx').on('webhook_deliveries').columns(['status', 'webhook_id', 'priority', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_lane_idx').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('priority').execute();
}
