import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Automation rules (issue 32) and their run log.
 * - `automation_rules`: per-base rules; `trigger` and `actions` are the client's JSON (normalized);
 *   `table_id` and `run_condition` are copied out so the consumer finds the rules of a changed table by
 *   index; `start_event_id` is the outbox position at creation (only later changes fire the rule);
 *   `next_run_at` is when a periodic rule is due.
 * - `automation_runs`: one row per run (the log and the work queue at once): `status` pending → done |
 *   failed; `outcomes` is a JSON list, one entry per action; e-mail and webhook actions still owed are
 *   retried at `next_attempt_at`. A row-writing run is marked done in the write's own transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('automation_rules'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('dtable_uuid', 'varchar(36)', (c) => c.notNull())
    .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
    .addColumn('run_condition', 'varchar(16)', (c) => c.notNull())
    .addColumn('condition', 'varchar(32)', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('creator_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('ctime', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('last_trigger_time', bigint)
    .addColumn('trigger_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_valid', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('invalid_reason', 'text')
    .addColumn('next_run_at', bigint)
    .addColumn('start_event_id', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('automation_rules_table_idx').on('automation_rules').columns(['base_id', 'table_id']).execute();
  await db.schema.createIndex('automation_rules_valid_idx').on('automation_rules').columns(['is_valid', 'ctime']).execute();
  await db.schema.createIndex('automation_rules_due_idx').on('automation_rules').columns(['next_run_at']).execute();

  await withId(db, db.schema.createTable('automation_runs'))
    .addColumn('rule_id', bigint, (c) => c.notNull().references('automation_rules.id').onDelete('cascade'))
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('trigger', 'varchar(32)', (c) => c.notNull())
    .addColumn('row_ids', 'text', (c) => c.notNull())
    /** JSON of the triggering row (cells by key, with `_id`), or null for a periodic run without rows. */
    .addColumn('row', 'text')
    .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('outcomes', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('finished_at', bigint)
    .addColumn('duration_ms', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('automation_runs_rule_idx').on('automation_runs').columns(['rule_id', 'id']).execute();
  await db.schema.createIndex('automation_runs_due_idx').on('automation_runs').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('automation_runs_base_idx').on('automation_runs').columns(['base_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('automation_runs').execute();
  await db.schema.dropTable('automation_rules').execute();
}
