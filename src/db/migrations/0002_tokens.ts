import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('api_tokens'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('app_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_hint', 'varchar(8)', (c) => c.notNull())
    .addColumn('permission', 'varchar(8)', (c) => c.notNull())
    .addColumn('generated_by', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_access', bigint)
    .addUniqueConstraint('api_tokens_base_app_uq', ['base_id', 'app_name'])
    .execute();

  await db.schema
    .createTable('credential_versions')
    .addColumn('credential', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('credential_versions').execute();
  await db.schema.dropTable('api_tokens').execute();
}
