import { sql } from 'kysely';
import { SQLITE_TICK_FUNCTION, type DialectName } from '../../db/index.js';
import type { Fragment } from './field-sql.js';

/**
 * A WHERE term true for every row that, on SQLite, calls back into JavaScript once per row looked at
 * (`rowIds`: the id column of every table of the FROM, so it runs in the innermost loop). A SQL thread
 * terminated at SQL_TIMEOUT_MS therefore stops at the next row and its thread is free at once, instead
 * of running the statement to its end. PostgreSQL cancels statements itself (statement_timeout).
 */
export function interruptible(dialect: DialectName, rowIds: readonly string[]): Fragment {
  if (dialect !== 'sqlite') return sql`1 = 1`;
  return sql`${sql.raw(SQLITE_TICK_FUNCTION)}(${sql.join(rowIds.map((ref) => sql.ref(ref)))}) = 1`;
}
