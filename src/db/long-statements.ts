import { sql, type RawBuilder } from 'kysely';

/**
 * Statements that may run for minutes on PostgreSQL: index builds and `VACUUM`/`ANALYZE` of a table of
 * millions of rows (issue 34: a row index of a 10,000,000-row table). Every connection has a statement
 * timeout (DATABASE_STATEMENT_TIMEOUT_MS, 30 s) on the server and a read timeout a little longer on the
 * client (db/connect.ts), which drops the connection; `set statement_timeout` lifts only the first. A text
 * that ends with `LONG_STATEMENT_MARK` gets a client read timeout of `LONG_STATEMENT_MS` (plus the margin)
 * instead, so the server's limit (which the caller sets to `LONG_STATEMENT_MS` on that connection, see
 * `longStatementTimeout`) is the one that applies. SQLite reads the mark as a comment.
 */
export const LONG_STATEMENT_MARK = ' /* long */';

/** How long a long statement may run: 10 minutes. */
export const LONG_STATEMENT_MS = 600_000;

/** Whether a statement's text is marked long. */
export function isLongStatement(text: string): boolean {
  return text.endsWith(LONG_STATEMENT_MARK);
}

/** `text` as a long statement. */
export function longStatement(text: string): RawBuilder<unknown> {
  return sql.raw(`${text}${LONG_STATEMENT_MARK}`);
}

/** `set statement_timeout` to `LONG_STATEMENT_MS` (PostgreSQL; on the connection a long statement runs on). */
export function longStatementTimeout(): RawBuilder<unknown> {
  return sql.raw(`set statement_timeout = ${LONG_STATEMENT_MS}`);
}
