/**
 * SQL through a view share (a Base-Token whose scope names one view, `access/scope.ts`): a statement
 * sees the view's table only, its visible columns only, and the view's rows only. Done around the
 * compiler, at the entry (`SqlService`), in three layers:
 * - a statement naming another table or a hidden column is refused (403, the rows API's words);
 * - the compiler is handed the view's table with its visible columns only (so `SELECT *` lists those);
 * - a SELECT runs with `base_rows` standing for the view's rows (a common table expression of the same
 *   name: the view's filters through the filters module, archived rows left out, hidden cells removed),
 *   and an UPDATE or DELETE matches only rows of the view (the same condition, in the write's transaction).
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { AppError } from '../../shared/errors.js';
import type { FilterContext } from '../filters/index.js';
import { loadMetadata, viewRowsWhere, VIEW_REFUSALS } from '../rows/index.js';
import type { Fragment } from './field-sql.js';
import { isNode, type Node } from './parser.js';
import { identifier } from './references.js';
import { resolveTable, tablesOf, type SqlColumn, type SqlTable } from './schema.js';

/** The view a Base-Token is limited to (its scope's ids) and who asks (the view's filters may name the current user). */
export interface SqlViewLimit {
  table: string;
  view: string;
  currentUser?: string;
}

export interface ViewSource {
  /** The tables a statement may name: the view's table, with its visible columns only. */
  tables: SqlTable[];
  /** The view's rows, as a condition on `base_rows` (an UPDATE or DELETE matches within it). */
  rows: Expression<SqlBool>;
  /** A compiled SELECT that reads the view's rows (with hidden cells removed) wherever it reads `base_rows`. */
  wrap(query: Fragment): Fragment;
}

const refused = (message: string) => new AppError(403, { error_msg: message });

/** The statement checked against the view and the source it runs over; 403 when it names what the view does not show. */
export async function viewSource(db: Executor, dialect: DialectName, baseId: number, limit: SqlViewLimit, ctx: FilterContext, ast: Node): Promise<ViewSource> {
  const meta = await loadMetadata(db, baseId);
  const table = meta.tables.find((t) => t._id === limit.table);
  const view = table?.views.find((v) => v._id === limit.view);
  if (!table || !view) throw refused(VIEW_REFUSALS.gone);
  const all = tablesOf(meta);
  refuseOtherTables(ast, all, limit.table);
  const full = all.find((t) => t.id === limit.table)!;
  const hidden = new Set(view.hidden_columns);
  refuseHiddenColumns(ast, full, hidden);
  const rows = viewRowsWhere(dialect, baseId, table, view, ctx);
  const hiddenKeys = full.columns.filter((c) => hidden.has(c.key)).map((c) => c.key);
  return {
    tables: [{ ...full, columns: full.columns.filter((c) => !hidden.has(c.key)) }],
    rows,
    wrap: (query) => sql`with base_rows as (${viewRows(dialect, rows, hiddenKeys)}) ${query}`,
  };
}

/**
 * The view's rows with the columns of `base_rows`. Inside the expression `base_rows` must be the table
 * itself: PostgreSQL's non-recursive WITH does not see its own name; SQLite is told the schema (`main.`).
 */
function viewRows(dialect: DialectName, rows: Expression<SqlBool>, hiddenKeys: string[]): Fragment {
  const data =
    hiddenKeys.length === 0
      ? sql`base_rows.data`
      : dialect === 'postgres'
        ? hiddenKeys.reduce<Fragment>((acc, key) => sql`(${acc} - cast(${key} as text))`, sql`base_rows.data`)
        : sql`json_remove(base_rows.data, ${sql.join(hiddenKeys.map((key) => `$."${key}"`))})`;
  const source = dialect === 'postgres' ? sql`base_rows` : sql`main.base_rows as base_rows`;
  return sql`select base_rows.id, base_rows.base_id, base_rows.table_id, base_rows.row_id, ${data} as data, base_rows.ctime, base_rows.mtime, base_rows.creator, base_rows.last_modifier from ${source} where ${rows}`;
}

/** 403 when FROM, a JOIN, INTO or UPDATE names a table other than the view's (unknown names stay the compiler's 400). */
function refuseOtherTables(ast: Node, tables: SqlTable[], tableId: string): void {
  for (const clause of [ast.from, ast.table]) {
    if (!Array.isArray(clause)) continue;
    for (const entry of clause) {
      const name = isNode(entry) ? identifier(entry.table) : undefined;
      if (name === undefined) continue;
      if (resolveTable(tables, name).id !== tableId) throw refused(VIEW_REFUSALS.table(name));
    }
  }
}

/**
 * 403 naming the first hidden column the statement names anywhere: column references (select list,
 * WHERE, GROUP BY, ORDER BY, function arguments), INSERT's column list, UPDATE's SET.
 */
function refuseHiddenColumns(ast: Node, table: SqlTable, hidden: ReadonlySet<string>): void {
  if (hidden.size === 0) return;
  const check = (name: string | undefined) => {
    const column = name === undefined ? undefined : columnNamed(table.columns, name);
    if (column && hidden.has(column.key)) throw refused(VIEW_REFUSALS.column(column.name));
  };
  const type = String(ast.type).toLowerCase();
  if (type === 'insert' && Array.isArray(ast.columns)) for (const c of ast.columns) check(identifier(c));
  if (type === 'update' && Array.isArray(ast.set)) for (const entry of ast.set) if (isNode(entry)) check(identifier(entry.column));
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    if (!isNode(value)) continue;
    if (value.type === 'column_ref') check(identifier(value.column));
    for (const key in value) if (key !== 'loc') stack.push(value[key]);
  }
}

/** A column as the compiler would resolve the name: exact name, a unique case-insensitive one, or its key. */
function columnNamed(columns: SqlColumn[], name: string): SqlColumn | undefined {
  const exact = columns.find((c) => c.name === name);
  if (exact) return exact;
  const loose = columns.filter((c) => c.name.toLowerCase() === name.toLowerCase());
  return loose.length === 1 ? loose[0] : columns.find((c) => c.key === name);
}
