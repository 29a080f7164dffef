import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * `held_events` and `held_event_columns`: the change events of a long multi-batch write (a CSV/XLSX
 * import) kept aside until the whole write is done. Each batch commits its rows with its events here
 * instead of in `events`; at the end one transaction moves them into the outbox in their order (so
 * webhooks, rules and live clients never see half an import), or a failure deletes them together with
 * the rows they describe. Same columns as `events` / `event_columns`, plus the hold's id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('held_events'))
    .addColumn('hold_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('base_uuid', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('table_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('row_name', 'text', (c) => c.notNull())
    .addColumn('op_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('op_user', 'varchar(255)', (c) => c.notNull())
    .addColumn('op_app', 'varchar(255)')
    .addColumn('op_time', bigint, (c) => c.notNull())
    .addColumn('row_data', 'text', (c) => c.notNull())
    .addColumn('row', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('write_id', 'varchar(36)')
    .execute();
  await db.schema.createIndex('held_events_hold_idx').on('held_events').columns(['hold_id', 'id']).execute();
  await db.schema
    .createTable('held_event_columns')
    .addColumn('hold_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('write_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('held_event_columns_pk', ['hold_id', 'write_id', 'table_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('held_event_columns').execute();
  await db.schema.dropTable('held_events').execute();
}
