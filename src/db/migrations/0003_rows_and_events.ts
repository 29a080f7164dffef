import type { Kysely } from 'kysely';
import { bigint, isPostgres, withId } from './helpers.js';

/**
 * Base data and the change-event outbox.
 * - `base_rows`: one row per record; `data` holds the cells keyed by column key (JSONB on PostgreSQL so
 *   filters and sorts run in SQL; TEXT with json_extract on SQLite).
 * - `base_links`: one row per link between two records of a link column (`link_id`).
 * - `events`: one row per changed record, written in the transaction of the change (the outbox).
 * - `event_consumers`: how far each consumer of `events` has acknowledged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const json = isPostgres(db) ? 'jsonb' : 'text';

  await withId(db, db.schema.createTable('base_rows'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('data', json, (c) => c.notNull())
    .addColumn('ctime', bigint, (c) => c.notNull())
    .addColumn('mtime', bigint, (c) => c.notNull())
    .addColumn('creator', 'varchar(255)', (c) => c.notNull())
    .addColumn('last_modifier', 'varchar(255)', (c) => c.notNull())
    .addUniqueConstraint('base_rows_row_uq', ['base_id', 'row_id'])
    .execute();
  await db.schema.createIndex('base_rows_table_idx').on('base_rows').columns(['base_id', 'table_id', 'id']).execute();

  await withId(db, db.schema.createTable('base_links'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('link_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('other_row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('ctime', bigint, (c) => c.notNull())
    .addUniqueConstraint('base_links_pair_uq', ['base_id', 'link_id', 'row_id', 'other_row_id'])
    .execute();
  await db.schema.createIndex('base_links_other_idx').on('base_links').columns(['base_id', 'link_id', 'other_row_id']).execute();

  // No foreign key to bases: consumers may still need the events of a base deleted meanwhile.
  await withId(db, db.schema.createTable('events'))
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
    .execute();
  await db.schema.createIndex('events_created_idx').on('events').column('created_at').execute();

  await db.schema
    .createTable('event_consumers')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('last_event_id', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['event_consumers', 'events', 'base_links', 'base_rows']) {
    await db.schema.dropTable(table).execute();
  }
}
