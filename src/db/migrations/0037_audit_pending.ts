import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Issue 33: audit rows commit with their action. An audited action appends its row to
 * `audit_pending` inside the action's own transaction (one INSERT, no lock); a sealer moves pending
 * rows into the hash chain (`audit_log`) in order shortly after, one sealer at a time (the
 * `audit_head` row lock). `digest` is sha256 of a row's fields taken when it was appended, so an edit
 * made before sealing is still detected after it (`audit_log.digest`; rows sealed before this
 * migration have none).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('audit_pending'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('actor', 'varchar(255)', (c) => c.notNull())
    .addColumn('ip', 'varchar(64)', (c) => c.notNull())
    .addColumn('base_id', bigint)
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('digest', 'varchar(64)', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('audit_log').addColumn('digest', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_log').dropColumn('digest').execute();
  await db.schema.dropTable('audit_pending').execute();
}
