import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Issue 33: a pending audit row deleted before it is sealed is detected. Each instance that appends
 * to `audit_pending` (PostgreSQL) counts its appends in its `audit_writers` row, in the appending
 * transaction, and stamps the row with the count (`writer`, `writer_seq`); the sealer records how far
 * it has chained each writer (`sealed`). A writer's pending rows are then exactly `sealed+1 … appended`,
 * so a missing one shows, before sealing (verify) and at sealing (a marker row in the chain).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_writers')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('appended', bigint, (c) => c.notNull())
    .addColumn('sealed', bigint, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('audit_pending').addColumn('writer', 'varchar(36)').execute();
  await db.schema.alterTable('audit_pending').addColumn('writer_seq', bigint).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_pending').dropColumn('writer_seq').execute();
  await db.schema.alterTable('audit_pending').dropColumn('writer').execute();
  await db.schema.dropTable('audit_writers').execute();
}
