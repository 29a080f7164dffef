import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * `base_metadata.revision`: bumped by every committed write to a base (rows, links, structure), in the
 * write's own transaction, so readers can tell in one query whether anything changed (issue 3: the
 * whole-base read is served from a cache keyed by it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('base_metadata')
    .addColumn('revision', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('base_metadata').dropColumn('revision').execute();
}
