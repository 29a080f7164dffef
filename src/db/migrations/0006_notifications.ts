import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Notification rules, the in-app inbox and the scheduler's leases.
 * - `notification_rules`: per-base rules; `trigger`/`action` are the client's JSON (normalized);
 *   `table_id` and `run_condition` are copied out so the engine finds the rules of a changed table
 *   by index; `next_run_at` is when a deadline rule's next daily run is due; `meta_version` is the
 *   base metadata version the rule was last checked against (a newer one triggers a re-check).
 * - `notifications`: one row per recipient; `email_due_at` is set while an e-mail may still be owed
 *   (cleared when read, mailed or skipped), so the digest finds its work by index.
 * - `notification_rule_marks`: (rule, row, mark) keys making notifications idempotent: `update`
 *   holds the last time a per_update rule fired for a row (the de-duplication window); a
 *   `YYYY-MM-DD` mark records a deadline reminder sent that day (exactly once per rule, row and day).
 * - `scheduler_leases`: one row per scheduled tick; the instance holding the lease runs it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('notification_rules'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('dtable_uuid', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('run_condition', 'varchar(16)', (c) => c.notNull())
    .addColumn('condition', 'varchar(32)', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('creator_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('ctime', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('last_trigger_time', bigint)
    .addColumn('is_valid', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('invalid_reason', 'text')
    .addColumn('next_run_at', bigint)
    .addColumn('meta_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('notification_rules_table_idx').on('notification_rules').columns(['base_id', 'table_id']).execute();
  await db.schema.createIndex('notification_rules_ctime_idx').on('notification_rules').columns(['ctime', 'id']).execute();
  await db.schema.createIndex('notification_rules_valid_idx').on('notification_rules').columns(['is_valid', 'ctime']).execute();
  await db.schema
    .createIndex('notification_rules_due_idx')
    .on('notification_rules')
    .columns(['run_condition', 'next_run_at'])
    .execute();

  await withId(db, db.schema.createTable('notifications'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('base_id', bigint, (c) => c.references('bases.id').onDelete('cascade'))
    .addColumn('dtable_uuid', 'varchar(36)')
    .addColumn('msg_type', 'varchar(40)', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('email_due_at', bigint)
    .addColumn('emailed_at', bigint)
    .execute();
  await db.schema.createIndex('notifications_user_idx').on('notifications').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('notifications_user_base_idx').on('notifications').columns(['user_id', 'base_id', 'id']).execute();
  await db.schema.createIndex('notifications_email_due_idx').on('notifications').column('email_due_at').execute();

  await db.schema
    .createTable('notification_rule_marks')
    .addColumn('rule_id', bigint, (c) => c.notNull().references('notification_rules.id').onDelete('cascade'))
    .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
    .addColumn('mark', 'varchar(16)', (c) => c.notNull())
    .addColumn('at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_rule_marks_pk', ['rule_id', 'row_id', 'mark'])
    .execute();
  await db.schema.createIndex('notification_rule_marks_at_idx').on('notification_rule_marks').column('at').execute();

  await db.schema
    .createTable('scheduler_leases')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('holder', 'varchar(64)', (c) => c.notNull())
    .addColumn('lease_until', bigint, (c) => c.notNull())
    .addColumn('last_started_at', bigint)
    .addColumn('last_finished_at', bigint)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['scheduler_leases', 'notification_rule_marks', 'notifications', 'notification_rules']) {
    await db.schema.dropTable(table).execute();
  }
}
