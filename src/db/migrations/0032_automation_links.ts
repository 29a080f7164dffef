import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * `automation_marks`: (rule, row, mark) keys that make a near-deadline automation fire once per
 * deadline: the mark is the row's deadline value, so the row fires again only when its date changes.
 * Deleted with the rule; old marks are pruned by `at`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('automation_marks')
    .addColumn('rule_id', bigint, (c) => c.notNull().references('automation_rules.id').onDelete('cascade'))
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('mark', 'varchar(64)', (c) => c.notNull())
    .addColumn('at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_marks_pk', ['rule_id', 'row_id', 'mark'])
    .execute();
  await db.schema.createIndex('automation_marks_at_idx').on('automation_marks').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('automation_marks').ifExists().execute();
}
