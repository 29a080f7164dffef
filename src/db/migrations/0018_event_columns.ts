import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * `event_columns`: the columns (key, name, type, data) of a write's insert events, stored once per
 * write and table instead of once per cell of every event. An insert event stored this way keeps its
 * cells only in `events.row`, and its `row_data` is the marker `{"cells":"row"}`; the events
 * repository rebuilds the same `rowData` on read. Events stored before keep their full `row_data`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_columns')
    .addColumn('write_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('event_columns_pk', ['write_id', 'table_id'])
    .execute();
  await db.schema.createIndex('event_columns_created_idx').on('event_columns').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_columns').execute();
}
