import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * `import_jobs`: one row per CSV/XLSX import in progress, written before its first batch and deleted in
 * the transaction that publishes it (or undoes it). A row left behind is an import whose process died:
 * at start-up the server undoes it (its staged rows and held events, the tables or base it created).
 * - `stage`: the 3-character code its rows are staged under (table id `~<stage><table id>`), unique per base.
 * - `owner`: the process that runs it (a random id per process); PostgreSQL instances also hold a
 *   session advisory lock on the job's id while it runs, so another instance's recovery leaves it alone.
 * - `created_tables`: JSON list of the table ids it created (removed on undo);
 *   `created_base`: 1 when it created the base (moved to the trash on undo).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('import_jobs'))
    .addColumn('hold_id', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('base_id', bigint, (c) => c.notNull())
    .addColumn('stage', 'varchar(3)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('owner', 'varchar(36)', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_tables', 'text', (c) => c.notNull())
    .addColumn('created_base', 'integer', (c) => c.notNull())
    .addColumn('started_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('import_jobs_stage_uq', ['base_id', 'stage'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('import_jobs').execute();
}
