import type { Kysely } from 'kysely';
import { bigint, notNull } from './helpers.js';

/**
 * `realtime_presence`: per base, until when some instance has (or, for the reconnection window after
 * its last socket left, may again have) live sockets joined to it. The realtime outbox consumer reads
 * it by primary key to skip, unparsed, the events of bases nobody listens to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('realtime_presence')
    .addColumn('base_id', 'integer', (c) => c.primaryKey())
    .addColumn('expires_at', bigint, notNull)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('realtime_presence').execute();
}
