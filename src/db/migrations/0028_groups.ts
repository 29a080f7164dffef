import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Teams: groups with members (owner, admins, members), one workspace per group (`workspaces.group_id`;
 * its `owner_id` follows the group's owner), bases shared with a group, and single views shared with a
 * user or a group.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('groups'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('owner_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('group_members')
    .addColumn('group_id', bigint, (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('group_members_user_idx').on('group_members').column('user_id').execute();

  await db.schema.alterTable('workspaces').addColumn('group_id', bigint).execute();
  await db.schema.createIndex('workspaces_group_idx').on('workspaces').column('group_id').execute();

  await db.schema
    .createTable('base_group_shares')
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('group_id', bigint, (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('permission', 'varchar(8)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('base_group_shares_pk', ['base_id', 'group_id'])
    .execute();
  await db.schema.createIndex('base_group_shares_group_idx').on('base_group_shares').column('group_id').execute();

  await withId(db, db.schema.createTable('view_shares'))
    .addColumn('base_id', bigint, (c) => c.notNull().references('bases.id').onDelete('cascade'))
    .addColumn('table_id', 'varchar(16)', (c) => c.notNull())
    .addColumn('view_id', 'varchar(16)', (c) => c.notNull())
    .addColumn('permission', 'varchar(8)', (c) => c.notNull())
    .addColumn('from_user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('to_user_id', bigint, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('to_group_id', bigint, (c) => c.references('groups.id').onDelete('cascade'))
    .addColumn('shared_name', 'varchar(255)')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('view_shares_user_uq', ['base_id', 'table_id', 'view_id', 'to_user_id'])
    .addUniqueConstraint('view_shares_group_uq', ['base_id', 'table_id', 'view_id', 'to_group_id'])
    .execute();
  await db.schema.createIndex('view_shares_user_idx').on('view_shares').column('to_user_id').execute();
  await db.schema.createIndex('view_shares_group_idx').on('view_shares').column('to_group_id').execute();
}
