import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * `row_comments`: comments on a base's rows (issue 12). `author` is the user's virtual id as the
 * original answers it; `author_id` decides who may edit or delete. Times are ms. Listed by
 * (base, table, row) and (base, table), newest first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('row_comments'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('row_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('author_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('author', 'varchar(255)', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull())
    .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('row_comments_row').on('row_comments').columns(['base_id', 'table_id', 'row_id', 'id']).execute();
  await db.schema.createIndex('row_comments_table').on('row_comments').columns(['base_id', 'table_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('row_comments').execute();
}
