import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Issue 34. `row_indexes` lists the expression indexes built on `base_rows` for one table's cells
 * (rows/row-indexes.ts): which base, table, column key, order kind and value type each serves, under
 * which index name. No foreign key to `bases`: an entry must outlive its base until its index is dropped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('row_indexes'))
    .addColumn('name', 'varchar(63)', (c) => c.notNull().unique())
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('column_key', 'varchar(64)', (c) => c.notNull())
    .addColumn('kind', 'varchar(8)', (c) => c.notNull())
    .addColumn('value_type', 'varchar(8)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('row_indexes_base').on('row_indexes').columns(['base_id', 'table_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('row_indexes').execute();
}
