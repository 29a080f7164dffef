import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * The base trash: a deleted base keeps its row (and with it its tables, rows, shares, tokens) with
 * `deleted_at` set until it is restored or purged. Its name moves to `trashed_name` and `name` gets a
 * placeholder no user can type (a control character), so the workspace's unique name is free for a
 * new base at once; a restore puts the name back (409 if it is taken meanwhile).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('bases').addColumn('deleted_at', bigint).execute();
  await db.schema.alterTable('bases').addColumn('trashed_name', 'varchar(255)').execute();
  await db.schema.createIndex('bases_deleted_idx').on('bases').columns(['deleted_at']).execute();
}
