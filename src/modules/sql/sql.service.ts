import { ORDERED_SCAN, searchCondition, type GroupSets, type RowIndexes } from '../rows/index.js';
import { answerFromGroupSet } from './group-set-plans.js';
import type { Field, SqlColumn, SqlTable } from './schema.js';
import type { Db, DialectName, Executor } from '../../db/index.js';
import { columnsBeyond, type Actor, type BaseRef } from '../rows/index.js';
import { decide, type TokenScope } from '../access/index.js';
import { sqlScopeRefusal } from './scope-tables.js';
import { AppError } from '../../shared/errors.js';
import { explainQuery, isQueryCanceled, parseLimited, runLimitedQuery, setStatementTimeout, timeoutError, type LimitedSqlDeps, type SqlCostLimits } from './cost-limits.js';
import type { SqlThreads } from './sql-threads.js';
import { shapeGrouped, shapeRows, type LinkCells } from './results.js';
import { FORMULA_SCAN_LIMIT, planSelect, type RowsPlan, type SelectContext } from './select.js';
import { singleIndexableColumn } from './indexed-groups.js';
import type { JoinPlan } from './join.js';
import { readField, type StoredRow } from './output.js';
import { loadTables, matchingRowIds, toStoredRow } from './sql.repository.js';
import { SqlError, sqlError } from './sql-error.js';
import { bindParameters } from './values.js';
import { planWrite, type WritePlan } from './write.js';
import { viewSource, type SqlViewLimit, type ViewSource } from './view-source.js';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Node } from './parser.js';

export interface SqlRequest {
  sql: string;
  convert_keys?: boolean;
  parameters?: unknown[];
}

export interface SqlResult {
  success: true;
  error_message: '';
  is_join_stmt: boolean;
  metadata: Record<string, unknown>[];
  results: Record<string, unknown>[];
  /** Rows an INSERT, UPDATE or DELETE wrote. */
  affected_rows?: number;
}

export type { Actor, BaseRef };

export interface SqlCaller {
  base: BaseRef;
  /** The Base-Token's permission: `rw` may write; anything else may only read (the access policy decides). */
  permission: string;
  actor: Actor;
  /** A scoped token's scope: the tables a statement names must be in it. */
  scope?: TokenScope;
  /** A view share's token: the statement sees that view only (view-source.ts). */
  view?: SqlViewLimit;
}

type Body = Record<string, unknown>;

/** One transaction of the rows module's write path, as `RowsService.writeMany` hands it out. */
export interface RowWriteScope {
  trx: Executor;
  append(body: Body): Promise<unknown>;
  update(body: Body): Promise<unknown>;
  remove(body: Body): Promise<unknown>;
}

/**
 * The rows module's write path (coercion per column type, change events). A whole statement runs in
 * one `writeMany` transaction, so an unlimited INSERT/UPDATE/DELETE is written whole or not at all;
 * it is handed over in parts of at most `limits` rows only to keep each batch's memory bounded.
 */
export interface RowWriter {
  writeMany<T>(base: BaseRef, actor: Actor, work: (rows: RowWriteScope) => Promise<T>): Promise<T>;
}

export interface RowWriteLimits {
  append: number;
  update: number;
  delete: number;
}

/** The rows module's link query (`{row_id: [{row_id, display_value}]}` per link column); links are not part of `data`. */
export interface LinkReader {
  query(base: BaseRef, body: Body): Promise<Record<string, unknown[]>>;
}

/** Linked rows a cell shows at most (the original's rule since 5.3), and rows per link query. */
const LINKS_PER_CELL = 50;
const LINK_QUERY_ROWS = 1000;

export interface SqlServiceDeps {
  db: Db;
  dialect: DialectName;
  writer: RowWriter;
  limits: RowWriteLimits;
  links?: LinkReader;
  /** Statement size, predicate terms, IN values and time limit (default: DEFAULT_COST_LIMITS). */
  cost?: SqlCostLimits;
  /** Threads that parse statements and run SQLite SELECTs off the main thread. */
  threads?: SqlThreads;
  /** TIME_ZONE: SQL date functions read dates there (default UTC). */
  timeZone?: string;
  /** `now()` / `today()` in SQL read this clock (default: the system clock). */
  clock?: { now(): number };
  /** The row indexes: columns a WHERE compares get one on a big table (rows/row-indexes.ts). */
  rowIndexes?: RowIndexes;
  /** Group sets: grouped statements over big tables answered from counts kept with the rows (rows/group-sets.ts). */
  groupSets?: GroupSets;
}

/** The WHERE conditions the formula library evaluates, then the statement's LIMIT/OFFSET (see planSelect). */
function applyResidual(residual: NonNullable<RowsPlan['residual']>, rows: Array<Record<string, unknown>>, stored: StoredRow[]) {
  if (rows.length > FORMULA_SCAN_LIMIT) {
    throw sqlError(`The WHERE uses functions computed by the formula engine, which reads at most ${FORMULA_SCAN_LIMIT} rows; narrow it with other conditions.`);
  }
  const keep = stored.map((row) => residual.conditions.every((c) => c.evaluate(row) === true));
  const { limit, offset } = residual.window;
  const pick = <T>(list: T[]) => list.filter((_, i) => keep[i]).slice(offset, offset + limit);
  return { rows: pick(rows), stored: pick(stored) };
}

/** The documented defaults of SQL_MAX_STATEMENT_BYTES, SQL_MAX_PREDICATE_TERMS, SQL_MAX_IN_VALUES and SQL_TIMEOUT_MS. */
export const DEFAULT_COST_LIMITS: SqlCostLimits = { maxStatementBytes: 65_536, maxPredicateTerms: 1000, maxInValues: 1000, timeoutMs: 10_000 };

const READ_ONLY = "You don't have permission to perform this operation on this base.";

/**
 * Refuses a statement naming a table outside a table-scoped token's scope; answers the tables as the
 * statement may see them: without the columns that show a table outside the scope (links to it and
 * link formulas over them, rows/scope-columns.ts) — `SELECT *` leaves them out and naming one is an
 * unknown column, as a view share's hidden columns are.
 */
function checkScope(caller: SqlCaller, ast: unknown, tables: SqlTable[]): SqlTable[] {
  const refusal = sqlScopeRefusal(caller.scope, ast as Record<string, unknown>, tables);
  if (refusal) throw new AppError(403, { error_msg: refusal });
  const scopeTables = caller.scope?.tables;
  if (!scopeTables) return tables;
  const all = tables.map((t) => ({ _id: t.id, name: t.name }));
  return tables.map((t) => {
    const beyond = columnsBeyond(scopeTables, all, { _id: t.id, columns: t.columns });
    return beyond.size === 0 ? t : { ...t, columns: t.columns.filter((c) => !beyond.has(c.key)) };
  });
}

export class SqlService {
  private readonly limited: LimitedSqlDeps;

  constructor(private readonly deps: SqlServiceDeps) {
    this.limited = { db: deps.db, dialect: deps.dialect, limits: deps.cost ?? DEFAULT_COST_LIMITS, threads: deps.threads };
  }

  /** Run one statement. Refusals are SqlError (400); a read-only token writing is a 403 AppError. */
  async execute(caller: SqlCaller, request: SqlRequest): Promise<SqlResult> {
    // Each base gets its share of the SQL threads (sql-threads.ts).
    const parsed = await parseLimited(this.limited, request.sql, caller.base.id);
    const bindings = bindParameters(parsed.placeholders, request.parameters ?? []);
    const convertKeys = request.convert_keys === true;
    const type = String(parsed.ast.type).toLowerCase();
    const { db, dialect } = this.deps;
    if (type !== 'select') {
      if (!['insert', 'update', 'delete'].includes(type)) throw sqlError('Only SELECT, INSERT, UPDATE and DELETE statements are supported.');
      if (!decide({ kind: 'base-token', permission: caller.permission }).canWrite) throw new AppError(403, { error_msg: READ_ONLY });
      const source = await this.viewSource(caller, parsed.ast);
      const tables = checkScope(caller, parsed.ast, source?.tables ?? (await loadTables(db, caller.base.id)));
      const affected = await this.write(caller, planWrite(parsed.ast, { dialect, tables, bindings }), source?.rows);
      return { ...ok([], []), affected_rows: affected };
    }
    const { plan, indexedBy, scan } = await this.planRead(caller, parsed.ast, parsed.text, bindings, convertKeys);
    let rows = await runLimitedQuery(this.limited, plan.query, caller.base.id, indexedBy).catch((error: unknown) => {
      // The row index went (a column deleted or retyped meanwhile, or another process dropped it): the statement reads the rows instead.
      if (scan && isMissingIndex(error)) return runLimitedQuery(this.limited, scan.query, caller.base.id);
      if (indexedBy && isMissingIndex(error)) return runLimitedQuery(this.limited, plan.query, caller.base.id);
      throw error;
    });
    if (plan.kind === 'grouped') return ok(plan.metadata, shapeGrouped(plan, rows));
    if (plan.kind === 'join') return { ...ok(plan.metadata, await this.joinResults(caller.base, plan, rows, convertKeys)), is_join_stmt: true };
    let stored = rows.map(toStoredRow);
    if (plan.residual) ({ rows, stored } = applyResidual(plan.residual, rows, stored));
    const columns = plan.outputs ? plan.outputs.flatMap((o) => ('field' in o && o.field.kind === 'cell' ? [o.field.column] : [])) : plan.table.columns;
    const linkKeys = columns.filter((c) => c.type === 'link').map((c) => c.key);
    const links = await this.linkCells(caller.base, plan.table.id, linkKeys, stored.map((r) => r._id));
    return ok(plan.metadata, shapeRows(plan, stored, convertKeys, links, rows));
  }

  /** The database's plan of a SELECT as this service runs it (tests and operations: which index answers it). */
  async explain(caller: SqlCaller, request: SqlRequest): Promise<string> {
    const parsed = await parseLimited(this.limited, request.sql, caller.base.id);
    if (String(parsed.ast.type).toLowerCase() !== 'select') throw sqlError('Only SELECT statements can be explained.');
    const { plan, indexedBy } = await this.planRead(caller, parsed.ast, parsed.text, bindParameters(parsed.placeholders, request.parameters ?? []), request.convert_keys === true);
    return explainQuery(this.deps.db, this.deps.dialect, plan.query, indexedBy);
  }

  /**
   * A SELECT's plan, the columns its WHERE compares noted (big tables get row indexes for them), and the
   * row-index hint of a single-table plan (RowIndexes.hint: on SQLite the index of a term that narrows
   * the table; on PostgreSQL ORDERED_SCAN for terms matching many rows).
   */
  private async planRead(caller: SqlCaller, ast: Parameters<typeof planSelect>[0], text: string, bindings: ReturnType<typeof bindParameters>, convertKeys: boolean) {
    const { db, dialect } = this.deps;
    const source = await this.viewSource(caller, ast);
    const tables = checkScope(caller, ast, source?.tables ?? (await loadTables(db, caller.base.id)));
    const now = (this.deps.clock ?? Date).now();
    const compared = new Map<string, SqlColumn[]>();
    const noteColumn = (tableId: string, column: SqlColumn) => compared.set(tableId, [...(compared.get(tableId) ?? []), column]);
    const fields: Field[] = [];
    const ctx: SelectContext = { dialect, tables, baseId: caller.base.id, bindings, text, convertKeys, timeZone: this.deps.timeZone, now: () => now, noteColumn, cells: { read: (f) => fields.push(f) } };
    const plan = planSelect(ast, ctx);
    const indexes = this.deps.rowIndexes;
    // SQLite answers a grouped statement over one column from that column's row index (indexed-groups.ts):
    // such a column is noted too, so a big table gets one.
    const grouped = plan.kind === 'grouped' && dialect === 'sqlite' && !source ? singleIndexableColumn(fields) : undefined;
    if (grouped && plan.kind === 'grouped') noteColumn(plan.table.id, grouped.column);
    for (const [tableId, columns] of compared) {
      indexes?.note(caller.base.id, { _id: tableId, columns }, columns.map((column) => ({ column, kind: 'filter' as const })));
    }
    // A view share's statement reads the view's rows (no row-index hint: they name `base_rows` itself).
    if (source) return { plan: { ...plan, query: source.wrap(plan.query) }, indexedBy: undefined };
    // A grouped statement a big table's group set answers exactly reads the set's rows (group-set-plans.ts).
    const fromSet = this.deps.groupSets ? await answerFromGroupSet(this.deps.groupSets, db, ast, ctx, plan, fields) : undefined;
    if (fromSet) return { plan: fromSet, indexedBy: undefined };
    const groupIndexName = grouped && plan.kind === 'grouped' ? indexes?.filterIndex(caller.base.id, plan.table.id, grouped.column.key) : undefined;
    if (grouped && groupIndexName) {
      const groupIndex = { key: grouped.column.key, index: groupIndexName, valueType: grouped.valueType };
      return { plan: planSelect(ast, { ...ctx, noteColumn: undefined, cells: undefined, groupIndex }), indexedBy: undefined, scan: plan };
    }
    // LIKE terms of a big table: read through its trigram index (built on the first such statement) when it narrows them.
    let read = plan;
    if (indexes && plan.kind !== 'join' && plan.searchTerms && plan.searchTerms.length > 0) {
      indexes.noteSearch(caller.base.id, plan.table.id);
      // A grouped statement reads every match; a row listing may stop at its LIMIT.
      const narrowing = await indexes.searchNarrowing(caller.base.id, plan.table.id, plan.searchTerms, plan.kind === 'grouped' ? 'all' : 'page').catch(() => undefined);
      if (narrowing) read = planSelect(ast, { ...ctx, noteColumn: undefined, cells: undefined, search: searchCondition(dialect, narrowing) });
    }
    let indexedBy: string | undefined;
    if (indexes && read.kind !== 'join' && read.indexTerms && read.indexTerms.length > 0) {
      // A probe the index cannot answer (SQLite refuses such an INDEXED BY) means no hint.
      indexedBy = await indexes.hint(caller.base.id, read.table.id, read.indexTerms, undefined).catch(() => undefined);
      // Sorts off only for row listings (a grouped query's plan is the planner's own).
      if (indexedBy === ORDERED_SCAN && read.kind !== 'rows') indexedBy = undefined;
    }
    return { plan: read, indexedBy };
  }

  /** Join rows → results keyed `<table>.<column>`, link cells loaded per joined table. */
  private async joinResults(base: BaseRef, plan: JoinPlan, rows: Array<Record<string, unknown>>, convertKeys: boolean) {
    const stored = plan.tables.map((_, i) =>
      rows.map((r) => toStoredRow({ row_id: r[`r${i}`], data: r[`d${i}`], ctime: r[`c${i}`], mtime: r[`m${i}`], creator: r[`u${i}`], last_modifier: r[`l${i}`] } as never)),
    );
    const links = await Promise.all(
      plan.tables.map((table, i) => {
        const keys = plan.outputs.flatMap((o) => (o.table === i && o.field.kind === 'cell' && o.field.column.type === 'link' ? [o.field.column.key] : []));
        return this.linkCells(base, table.id, [...new Set(keys)], [...new Set(stored[i]!.map((r) => r._id))]);
      }),
    );
    return rows.map((_, n) => Object.fromEntries(plan.outputs.map((o) => [o.key, readField(o.field, stored[o.table]![n]!, convertKeys, links[o.table])])));
  }

  private async linkCells(base: BaseRef, tableId: string, columnKeys: string[], rowIds: string[]): Promise<LinkCells | undefined> {
    const reader = this.deps.links;
    if (!reader || columnKeys.length === 0 || rowIds.length === 0) return undefined;
    const cells: LinkCells = new Map();
    for (const key of columnKeys) {
      for (const part of chunks(rowIds, LINK_QUERY_ROWS)) {
        const linked = await reader.query(base, { table_id: tableId, link_column_key: key, rows: part.map((row_id) => ({ row_id, limit: LINKS_PER_CELL })) });
        for (const [rowId, list] of Object.entries(linked)) cells.set(`${key}:${rowId}`, list);
      }
    }
    return cells;
  }

  /** The view a view share's statement is limited to (403 when it names what the view hides); undefined for other tokens. */
  private viewSource(caller: SqlCaller, ast: Node): Promise<ViewSource | undefined> {
    if (!caller.view) return Promise.resolve(undefined);
    const ctx = { now: (this.deps.clock ?? Date).now(), timeZone: this.deps.timeZone ?? 'UTC', currentUser: caller.view.currentUser };
    return viewSource(this.deps.db, this.deps.dialect, caller.base.id, caller.view, ctx, ast);
  }

  /** `within`: a view share's UPDATE or DELETE matches the view's rows only. */
  private async write(caller: SqlCaller, plan: WritePlan, within?: Expression<SqlBool>): Promise<number> {
    try {
      return await this.writeAll(caller, plan.kind === 'insert' || !within ? plan : { ...plan, where: sql`${plan.where} and ${within}` });
    } catch (error) {
      if (isQueryCanceled(error)) throw timeoutError(this.limited.limits);
      throw error;
    }
  }

  private writeAll(caller: SqlCaller, plan: WritePlan): Promise<number> {
    const { writer, limits } = this.deps;
    const tableId = plan.table.id;
    return rowsCall(() =>
      writer.writeMany(caller.base, caller.actor, async (rows) => {
        if (plan.kind === 'insert') {
          for (const part of chunks(plan.rows, limits.append)) await rows.append({ table_id: tableId, rows: part });
          return plan.rows.length;
        }
        // Matched inside the transaction, which holds the base's write lock: no row can vanish meanwhile.
        // On PostgreSQL the matching and the writes run under the time limit.
        if (this.deps.dialect === 'postgres') await setStatementTimeout(rows.trx, this.limited.limits.timeoutMs);
        const ids = await matchingRowIds(rows.trx, caller.base.id, tableId, plan.where);
        if (plan.kind === 'delete') {
          for (const part of chunks(ids, limits.delete)) await rows.remove({ table_id: tableId, row_ids: part });
          return ids.length;
        }
        for (const part of chunks(ids, limits.update)) {
          await rows.update({ table_id: tableId, updates: part.map((row_id) => ({ row_id, row: plan.set })) });
        }
        return ids.length;
      }),
    );
  }
}

/** A value the rows module refuses (400 `{"error_msg"}`) becomes the SQL endpoint's own error body. */
async function rowsCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 400) {
      const message = error.body?.error_msg;
      throw sqlError(typeof message === 'string' ? message : 'The values could not be written.');
    }
    throw error;
  }
}

/** SQLite's refusal of an `INDEXED BY` naming an index that is gone (wrapped by runLimitedQuery). */
function isMissingIndex(error: unknown): boolean {
  const cause = error instanceof SqlError ? (error as { cause?: unknown }).cause : error;
  return /no such index/i.test(String((cause as { message?: unknown } | null)?.message ?? ''));
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function ok(metadata: Record<string, unknown>[], results: Record<string, unknown>[]): SqlResult {
  return { success: true, error_message: '', is_join_stmt: false, metadata, results };
}

