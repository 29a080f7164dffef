import type { Kysely } from 'kysely';

/**
 * `events.write_id`: the same value on every event of one write (one transaction), so the live channel
 * sends a batch write as one operation (`insert_rows`, `modify_rows`, `delete_rows`, `update_rows_links`).
 * Null on events written before it existed (each is then a write of its own).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').addColumn('write_id', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').dropColumn('write_id').execute();
}
