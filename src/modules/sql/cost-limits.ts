import { CompiledQuery, sql } from 'kysely';
import { ORDERED_SCAN } from '../rows/index.js';
import type { Executor, Db, DialectName } from '../../db/index.js';
import type { Fragment } from './field-sql.js';
import { isNode, parseStatement, PARSE_OPTIONS, statementOf, syntaxError, type Node, type ParsedStatement } from './parser.js';
import { withoutIlike } from './ilike.js';
import { isStatementError, MAX_BOUND_VALUES } from './sql.repository.js';
import { SqlError, sqlError } from './sql-error.js';
import { SqlThreads, SqlTimeoutError, THREAD_HEAP_MB, type StatementCost, type ThreadOwner, type ThreadParse } from './sql-threads.js';

/** The cost bounds of one statement (SQL_* in the configuration; see docs/security.md). */
export interface SqlCostLimits {
  maxStatementBytes: number;
  maxPredicateTerms: number;
  maxInValues: number;
  timeoutMs: number;
}

/** Refused before parsing: parsing costs time in proportion to the text. */
export function checkStatementSize(text: string, limits: SqlCostLimits): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxStatementBytes) {
    throw sqlError(`The statement is ${bytes} bytes, above the limit of ${limits.maxStatementBytes} bytes (SQL_MAX_STATEMENT_BYTES).`);
  }
}

/**
 * Refused after parsing, before compiling: the number of predicate terms (comparisons, AND/OR/NOT,
 * other operators) and of IN-list values, which bound the compiler's work and the query's per-row cost.
 */
export function checkStatementCost(ast: Node, limits: SqlCostLimits): void {
  checkCost(countCost(ast), limits);
}

/** Predicate terms and IN values of a parsed statement (reader-thread.ts counts the same way). */
export function countCost(ast: Node): StatementCost {
  let terms = 0;
  let inValues = 0;
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    if (!isNode(value)) continue;
    if (value.type === 'binary_expr' || value.type === 'unary_expr') {
      const op = String(value.operator ?? '').toUpperCase();
      // A term is an operand of AND/OR that is not itself an expression, or any other operator.
      if (op === 'AND' || op === 'OR') terms += Number(!isExpr(value.left)) + Number(!isExpr(value.right));
      else terms++;
      const right = value.right as { type?: unknown; value?: unknown } | undefined;
      if ((op === 'IN' || op === 'NOT IN') && right?.type === 'expr_list' && Array.isArray(right.value)) inValues += right.value.length;
    }
    for (const key in value) if (key !== 'loc') stack.push(value[key]);
  }
  return { terms, inValues };
}

function isExpr(value: unknown): boolean {
  return isNode(value) && (value.type === 'binary_expr' || value.type === 'unary_expr');
}

function checkCost({ terms, inValues }: StatementCost, limits: SqlCostLimits): void {
  if (terms > limits.maxPredicateTerms) {
    throw sqlError(`The statement has ${terms} predicate terms, above the limit of ${limits.maxPredicateTerms} (SQL_MAX_PREDICATE_TERMS).`);
  }
  if (inValues > limits.maxInValues) {
    throw sqlError(`The statement has ${inValues} IN values, above the limit of ${limits.maxInValues} (SQL_MAX_IN_VALUES).`);
  }
}

export function timeoutError(limits: SqlCostLimits): SqlError {
  return sqlError(`The query took longer than the limit of ${limits.timeoutMs} ms (SQL_TIMEOUT_MS).`);
}

export interface LimitedSqlDeps {
  db: Db;
  dialect: DialectName;
  limits: SqlCostLimits;
  /** Off-main-thread parsing (and SQLite SELECTs); absent or disabled: on the main thread. */
  threads?: SqlThreads;
}

/** Size check, parse (on a SQL thread when there is one), cost check. */
export async function parseLimited(deps: LimitedSqlDeps, text: string, owner?: ThreadOwner): Promise<ParsedStatement> {
  checkStatementSize(text, deps.limits);
  const { limits, threads } = deps;
  if (!threads?.enabled || text.trim() === '') {
    const parsed = parseStatement(text);
    checkStatementCost(parsed.ast, limits);
    return parsed;
  }
  let result: ThreadParse;
  try {
    result = await threads.parse(withoutIlike(text), PARSE_OPTIONS, { maxTerms: limits.maxPredicateTerms, maxInValues: limits.maxInValues }, owner);
  } catch (error) {
    if (error instanceof SqlTimeoutError) throw timeoutError(limits);
    if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw sqlError(`The statement needs more than the ${THREAD_HEAP_MB} MB a SQL thread has to parse it; make it smaller.`);
    }
    throw syntaxError(error, text);
  }
  checkCost(result.cost, limits);
  if (result.json === null) throw sqlError('The statement could not be parsed.');
  return statementOf(JSON.parse(result.json), text);
}

/**
 * A compiled SELECT under the time limit: PostgreSQL cancels it (`SET LOCAL statement_timeout` in
 * its own transaction); SQLite runs it on a SQL thread's read-only connection (or a copy of a database
 * in memory), so the event loop never waits on it (SQL_READER_THREADS=0 runs it here).
 */
export async function runLimitedQuery(deps: LimitedSqlDeps, query: Fragment, owner?: ThreadOwner, indexedBy?: string): Promise<Array<Record<string, unknown>>> {
  const compiled = withIndexHint(query.compile(deps.db), deps.dialect, indexedBy);
  if (compiled.parameters.length > MAX_BOUND_VALUES) throw sqlError(`The statement has too many values (more than ${MAX_BOUND_VALUES}).`);
  try {
    if (deps.dialect === 'postgres') {
      return await deps.db.transaction().execute(async (trx) => {
        await setStatementTimeout(trx, deps.limits.timeoutMs);
        if (indexedBy === ORDERED_SCAN) await sql.raw('set local enable_sort = off').execute(trx);
        return (await trx.executeQuery<Record<string, unknown>>(compiled)).rows;
      });
    }
    if (deps.threads && (await deps.threads.canQuery())) return await deps.threads.query(compiled.sql, compiled.parameters, owner);
    return (await deps.db.executeQuery<Record<string, unknown>>(compiled)).rows;
  } catch (error) {
    if (error instanceof SqlTimeoutError || isQueryCanceled(error)) throw timeoutError(deps.limits);
    if (isStatementError(error)) throw new SqlError('The statement could not be executed.', { cause: error });
    throw error;
  }
}

/**
 * A row-index hint (RowIndexes.hint) applied to a compiled single-table SELECT: on SQLite `INDEXED BY`
 * after its `from base_rows` (the first one: a grouped query's inner query); PostgreSQL's ORDERED_SCAN is
 * a setting of the transaction (runLimitedQuery).
 */
function withIndexHint<R>(compiled: CompiledQuery<R>, dialect: DialectName, indexedBy: string | undefined): CompiledQuery<R> {
  if (!indexedBy || dialect !== 'sqlite' || indexedBy === ORDERED_SCAN) return compiled;
  return CompiledQuery.raw(compiled.sql.replace(/\bfrom base_rows\b/, `from base_rows indexed by "${indexedBy.replace(/"/g, '')}"`), [...compiled.parameters]) as CompiledQuery<R>;
}

/** The plan of a SELECT as runLimitedQuery would run it (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN). */
export async function explainQuery(db: Db, dialect: DialectName, query: Fragment, indexedBy?: string): Promise<string> {
  const compiled = withIndexHint(query.compile(db), dialect, indexedBy);
  const explained = CompiledQuery.raw(`${dialect === 'postgres' ? 'explain' : 'explain query plan'} ${compiled.sql}`, [...compiled.parameters]);
  const run = async (e: Executor) => {
    if (dialect === 'postgres' && indexedBy === ORDERED_SCAN) await sql.raw('set local enable_sort = off').execute(e);
    return (await e.executeQuery<Record<string, unknown>>(explained)).rows;
  };
  const rows = dialect === 'postgres' ? await db.transaction().execute(run) : await run(db);
  return rows.map((r) => String(r.detail ?? r['QUERY PLAN'] ?? '')).join('\n');
}

/** PostgreSQL: the rest of the current transaction runs under the time limit (no-op on SQLite). */
export async function setStatementTimeout(trx: Executor, timeoutMs: number): Promise<void> {
  // SET takes no bind parameters; the value is a validated integer.
  await sql.raw(`set local statement_timeout = ${Math.trunc(timeoutMs)}`).execute(trx);
}

/** PostgreSQL 57014 query_canceled: statement_timeout fired. */
export function isQueryCanceled(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}
