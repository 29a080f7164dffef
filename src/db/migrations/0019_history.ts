import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * The operation log (issue 28): one `operation_log` row per write to a base (its changes as compact
 * JSON: only the cells that changed), and one `operation_log_rows` row per row the write touched, so a
 * row's history and the conflict check of a restore are one indexed range. No foreign key to `bases`:
 * a deleted base's operations are pruned with the others (a cascade would delete millions of rows in
 * the base's delete). Listed newest first by (base, id); pruned by time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('operation_log'))
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('write_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('op_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)')
    .addColumn('op_user', 'varchar(255)', (c) => c.notNull())
    .addColumn('op_app', 'varchar(255)')
    .addColumn('op_time', bigint, (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('reverts', bigint)
    .execute();
  await db.schema.createIndex('operation_log_base').on('operation_log').columns(['base_id', 'id']).execute();
  await db.schema.createIndex('operation_log_table').on('operation_log').columns(['base_id', 'table_id', 'id']).execute();
  await db.schema.createIndex('operation_log_user').on('operation_log').columns(['base_id', 'op_user', 'id']).execute();
  await db.schema.createIndex('operation_log_time').on('operation_log').column('op_time').execute();
  await db.schema
    .createTable('operation_log_rows')
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('row_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('op_id', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('operation_log_rows_pk', ['base_id', 'row_id', 'op_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('operation_log_rows').execute();
  await db.schema.dropTable('operation_log').execute();
}
