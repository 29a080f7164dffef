import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Snapshots keep the files their rows reference (issue 28): `snapshot_files` lists each snapshot's files
 * (path in the base, content hash, size, the stored object's change time) and `snapshot_blobs` the
 * content-addressed copies in the asset storage (`snapshot-blobs/<sha256>`), shared by every snapshot
 * that holds the same bytes, so an unchanged file is stored once however many snapshots keep it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('snapshot_files'))
    .addColumn('snapshot_id', bigint, (c) => c.notNull().references('base_snapshots.id').onDelete('cascade'))
    .addColumn('path', 'varchar(4096)', (c) => c.notNull())
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('modified', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snapshot_files_snapshot').on('snapshot_files').columns(['snapshot_id', 'id']).execute();
  await db.schema.createIndex('snapshot_files_blob').on('snapshot_files').column('sha256').execute();
  await db.schema
    .createTable('snapshot_blobs')
    .addColumn('sha256', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('used_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snapshot_blobs_used').on('snapshot_blobs').column('used_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('snapshot_blobs').execute();
  await db.schema.dropTable('snapshot_files').execute();
}
