import type { Kysely } from 'kysely';
import { bigint, notNull, withId } from './helpers.js';

/**
 * `structure_events`: the structure changes of a base (tables, columns, views, select options) as
 * operation objects, written in the transaction of the change, for the live channel (issue 14).
 * Kept apart from `events` (row changes, handed to webhooks and rules); `after_event_id` places each
 * one in the commit order of `events`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('structure_events'))
    .addColumn('base_id', 'integer', notNull)
    .addColumn('base_uuid', 'varchar(64)', notNull)
    .addColumn('after_event_id', bigint, notNull)
    .addColumn('op', 'text', notNull)
    .addColumn('op_user', 'varchar(255)', notNull)
    .addColumn('op_app', 'varchar(255)')
    .addColumn('op_time', bigint, notNull)
    .addColumn('created_at', bigint, notNull)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('structure_events').execute();
}
