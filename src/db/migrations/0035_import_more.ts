import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * `held_event_batches`: the change events of one batch of a multi-batch write (an import), held until
 * the write is published: one row per batch, its events a JSON array that the release expands in SQL
 * into `events` (held-events.ts). Replaces one `held_events` row per event (kept for holds an older
 * version left behind), so a batch costs one insert and the release one delete per batch.
 *
 * `held_updates`: the cell changes a multi-batch write (`update-table-via-excel-csv`) makes to existing
 * rows, kept aside until the whole write is done. Each batch stores its changes here (one row per
 * changed row: the table, the row, the new cells by column name as JSON); the transaction that publishes
 * the import applies them in order (with their modify events), so readers see the updated cells only
 * together with the rest of the import; an undo just deletes them. Nothing in `base_rows` changes before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('held_event_batches'))
    .addColumn('hold_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('write_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('held_event_batches_hold_idx').on('held_event_batches').columns(['hold_id', 'id']).execute();
  await withId(db, db.schema.createTable('held_updates'))
    .addColumn('hold_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('cells', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('held_updates_hold_idx').on('held_updates').columns(['hold_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('held_updates').execute();
  await db.schema.dropTable('held_event_batches').execute();
}
