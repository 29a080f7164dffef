import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/**
 * A base's revision (the read caches' key: every committed write to the base changes it) as a SQL
 * expression over a `base_metadata` row. On PostgreSQL it is the metadata's own counter (serialized
 * writers bump it) plus the sum of the base's `base_revision_stripes` (concurrent appends each add 1
 * to one stripe, migration 0048): the sum only grows and each commit changes it. SQLite: the counter.
 */
export function baseRevisionSql(db: Executor): RawBuilder<number> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<number>`(base_metadata.revision + coalesce((SELECT sum(s.n) FROM base_revision_stripes AS s WHERE s.base_id = base_metadata.base_id), 0))`
    : sql<number>`base_metadata.revision`;
}
