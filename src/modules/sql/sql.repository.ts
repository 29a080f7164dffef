/** The SQL module's only database access: the base's metadata, and running compiled statements. */
import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { Fragment } from './field-sql.js';
import { tablesOf, type SqlTable } from './schema.js';
import { SqlError, sqlError } from './sql-error.js';

/** Bound values per statement, below both engines' limits (SQLite 32766, PostgreSQL 65535). */
export const MAX_BOUND_VALUES = 30_000;

export async function loadTables(db: Executor, baseId: number): Promise<SqlTable[]> {
  const row = await db.selectFrom('base_metadata').select('data').where('base_id', '=', baseId).executeTakeFirst();
  if (!row) return [];
  return tablesOf(JSON.parse(row.data));
}

export async function runQuery(db: Executor, query: Fragment): Promise<Array<Record<string, unknown>>> {
  const compiled = query.compile(db);
  if (compiled.parameters.length > MAX_BOUND_VALUES) throw sqlError(`The statement has too many values (more than ${MAX_BOUND_VALUES}).`);
  try {
    const result = await db.executeQuery<Record<string, unknown>>(compiled);
    return result.rows;
  } catch (error) {
    if (isStatementError(error)) throw new SqlError('The statement could not be executed.', { cause: error });
    throw error;
  }
}

/**
 * An engine error caused by the statement rather than by the server (PostgreSQL data exceptions,
 * syntax/semantic errors and program limits; SQLite statement errors). The compiler should never
 * produce one; should it, the client gets a 400 and the cause is logged, instead of a 500.
 */
export function isStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^(22|42|54)/.test(code) || ['SQLITE_ERROR', 'SQLITE_TOOBIG', 'SQLITE_RANGE', 'SQLITE_MISMATCH'].includes(code);
}

export { storedRowFromRecord as toStoredRow } from '../rows/index.js';

/** Ids of the table's rows matching `where`, in insertion order (UPDATE and DELETE act on these). */
export async function matchingRowIds(db: Executor, baseId: number, tableId: string, where: Fragment): Promise<string[]> {
  const rows = await runQuery(db, sql`select row_id from base_rows where base_id = ${baseId} and table_id = ${tableId} and ${where} order by id`);
  return rows.map((r) => String(r.row_id));
}

/** The SQLite database's file, or null when it has none (in memory) — SQL threads open it read-only. */
export async function sqliteFileOf(db: Executor): Promise<string | null> {
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const file = rows.find((r) => r.name === 'main')?.file;
  return file ? file : null;
}
