import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('virtual_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('email', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
    .addColumn('is_staff', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('email_notification', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('account_tokens')
    .addColumn('user_id', bigint, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_salt', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('workspaces'))
    .addColumn('owner_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workspaces_owner_idx').on('workspaces').column('owner_id').execute();

  await withId(db, db.schema.createTable('bases'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('workspace_id', bigint, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('creator_id', bigint, (c) => c.notNull())
    .addColumn('modifier_id', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('bases_workspace_name_uq', ['workspace_id', 'name'])
    .execute();

  await db.schema
    .createTable('base_shares')
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('permission', 'varchar(8)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('base_shares_pk', ['base_id', 'user_id'])
    .execute();
  await db.schema.createIndex('base_shares_user_idx').on('base_shares').column('user_id').execute();

  await withId(db, db.schema.createTable('external_links'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('token', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('is_custom', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('password_hash', 'varchar(255)')
    .addColumn('expire_at', bigint)
    .addColumn('creator_id', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('base_metadata')
    .addColumn('base_id', bigint, (c) => c.primaryKey().references('bases.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();

  await db.schema.createIndex('external_links_base_idx').on('external_links').column('base_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['base_metadata', 'external_links', 'base_shares', 'bases', 'workspaces', 'account_tokens', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
