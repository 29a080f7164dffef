import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/** Per-base rate limits a system admin sets at runtime (issue 7). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limit_overrides')
    .addColumn('base_id', bigint, (c) => c.primaryKey().references('bases.id').onDelete('cascade'))
    .addColumn('per_minute', bigint, (c) => c.notNull())
    .addColumn('updated_by', bigint, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_limit_overrides').execute();
}
