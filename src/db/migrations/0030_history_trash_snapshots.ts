import type { Kysely } from 'kysely';
import { bigint, isPostgres, withId } from './helpers.js';

/**
 * The table trash (issue 28): a deleted table keeps its structure (`trashed_tables.meta`: the table and
 * the link columns other tables lost with it) and its rows with their links (`trashed_table_rows`, one
 * row each) until it is restored, purged or older than TRASH_RETENTION_DAYS. Both go with their base.
 * Snapshots (`base_snapshots`): the whole-base archive of a base at one revision, kept by a tiered policy.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('trashed_tables'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('table_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('deleted_by', 'varchar(255)', (c) => c.notNull())
    .addColumn('deleted_at', bigint, (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trashed_tables_base').on('trashed_tables').columns(['base_id', 'id']).execute();
  await db.schema.createIndex('trashed_tables_time').on('trashed_tables').column('deleted_at').execute();
  await withId(db, db.schema.createTable('trashed_table_rows'))
    .addColumn('trash_id', bigint, (c) => c.notNull().references('trashed_tables.id').onDelete('cascade'))
    .addColumn('row_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trashed_table_rows_trash').on('trashed_table_rows').columns(['trash_id', 'id']).execute();
  // Snapshots: a base's whole-base archive (the export-dtable zip, without files) at one revision.
  await withId(db, db.schema.createTable('base_snapshots'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('commit_id', 'varchar(40)', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('base_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('archive', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('base_snapshots_base').on('base_snapshots').columns(['base_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('base_snapshots').execute();
  await db.schema.dropTable('trashed_table_rows').execute();
  await db.schema.dropTable('trashed_tables').execute();
}
