/**
 * INSERT / UPDATE / DELETE → what to hand to the rows module's write path (which coerces cells per
 * column type and writes the change events). Values must be constants, as in the original.
 */
import { sql } from 'kysely';
import type { DialectName } from '../../db/index.js';
import type { Fragment } from './field-sql.js';
import { isNode, type Node } from './parser.js';
import { compilePredicate } from './predicates.js';
import { identifier, singleTable, type TableScope } from './references.js';
import { whereScope } from './select.js';
import { resolveField, WRITABLE_TYPES, type SqlColumn, type SqlTable } from './schema.js';
import { sqlError } from './sql-error.js';
import { constantOf, type Bindings, type Scalar } from './values.js';

/** A written cell value: a constant, or a list of constants for multi-value cells (`('a', 'b')`). */
export type CellValue = Scalar | Scalar[];

export interface InsertPlan {
  kind: 'insert';
  table: SqlTable;
  /** Rows keyed by column name (names are unique in a table; the rows module resolves them first). */
  rows: Array<Record<string, CellValue>>;
}

export interface UpdatePlan {
  kind: 'update';
  table: SqlTable;
  set: Record<string, CellValue>;
  where: Fragment;
}

export interface DeletePlan {
  kind: 'delete';
  table: SqlTable;
  where: Fragment;
}

export type WritePlan = InsertPlan | UpdatePlan | DeletePlan;

export interface WriteContext {
  dialect: DialectName;
  tables: SqlTable[];
  bindings: Bindings;
}

export function planWrite(ast: Node, ctx: WriteContext): WritePlan {
  switch (String(ast.type).toLowerCase()) {
    case 'insert':
      return planInsert(ast, ctx);
    case 'update':
      return planUpdate(ast, ctx);
    case 'delete':
      return planDelete(ast, ctx);
    default:
      throw sqlError('Only SELECT, INSERT, UPDATE and DELETE statements are supported.');
  }
}

function writableColumn(scope: TableScope, name: string): SqlColumn {
  const field = resolveField(scope.table, name);
  const column = field.column;
  if (!column) throw sqlError(`${name} is maintained by the server and cannot be written.`);
  if (!WRITABLE_TYPES.includes(column.type)) throw sqlError(`Column '${column.name}' (${column.type}) cannot be written with SQL.`);
  return column;
}

function cellValue(node: unknown, ctx: WriteContext, column: SqlColumn): CellValue {
  if (!isNode(node)) throw sqlError(`Unsupported value for column '${column.name}'.`);
  if (node.type === 'expr_list' && Array.isArray(node.value)) {
    return (node.value as unknown[]).map((item) => {
      const value = isNode(item) ? constantOf(item, ctx.bindings) : undefined;
      if (value === undefined) throw sqlError(`Values for column '${column.name}' must be constants or ? parameters.`);
      return value;
    });
  }
  const value = constantOf(node, ctx.bindings);
  if (value === undefined) throw sqlError(`Values for column '${column.name}' must be constants or ? parameters (no expressions or functions).`);
  return value;
}

function refuseOrderAndLimit(ast: Node, statement: string): void {
  if (Array.isArray(ast.orderby) && ast.orderby.length > 0) throw sqlError(`ORDER BY is not supported in ${statement}.`);
  if (ast.limit !== null && ast.limit !== undefined) {
    const values = (ast.limit as { value?: unknown }).value;
    if (!Array.isArray(values) || values.length > 0) throw sqlError(`LIMIT is not supported in ${statement}.`);
  }
  if (ast.with !== null && ast.with !== undefined) throw sqlError('WITH is not supported.');
}

function planInsert(ast: Node, ctx: WriteContext): InsertPlan {
  const scope = singleTable(ast.table, ctx.tables);
  if (ast.on_duplicate_update !== null && ast.on_duplicate_update !== undefined) throw sqlError('ON DUPLICATE KEY UPDATE is not supported.');
  if (ast.partition !== null && ast.partition !== undefined) throw sqlError('PARTITION is not supported.');
  if (!Array.isArray(ast.columns) || ast.columns.length === 0) throw sqlError('INSERT needs a column list: INSERT INTO table (col1, col2) VALUES (…).');
  const columns = ast.columns.map((c) => {
    const name = identifier(c);
    if (name === undefined) throw sqlError('Unsupported column in INSERT.');
    return writableColumn(scope, name);
  });
  if (new Set(columns.map((c) => c.key)).size !== columns.length) throw sqlError('A column is listed twice in INSERT.');
  const values = isNode(ast.values) ? ast.values : undefined;
  if (!values || values.type !== 'values' || !Array.isArray(values.values)) throw sqlError('INSERT supports VALUES (…) lists only.');
  const rows = (values.values as unknown[]).map((tuple, index) => {
    const items = isNode(tuple) && Array.isArray(tuple.value) ? (tuple.value as unknown[]) : undefined;
    if (!items) throw sqlError(`Row ${index + 1} of VALUES is not a list of values.`);
    if (items.length !== columns.length) throw sqlError(`Row ${index + 1} of VALUES has ${items.length} value(s) for ${columns.length} column(s).`);
    const row: Record<string, CellValue> = {};
    columns.forEach((column, i) => (row[column.name] = cellValue(items[i], ctx, column)));
    return row;
  });
  return { kind: 'insert', table: scope.table, rows };
}

function planUpdate(ast: Node, ctx: WriteContext): UpdatePlan {
  refuseOrderAndLimit(ast, 'UPDATE');
  if (ast.from !== null && ast.from !== undefined) throw sqlError('UPDATE … FROM is not supported.');
  const scope = singleTable(ast.table, ctx.tables);
  if (!Array.isArray(ast.set) || ast.set.length === 0) throw sqlError('UPDATE needs SET column = value.');
  const set: Record<string, CellValue> = {};
  for (const entry of ast.set as unknown[]) {
    if (!isNode(entry)) throw sqlError('Unsupported SET clause.');
    if (entry.table !== null && entry.table !== undefined) {
      const qualifier = identifier(entry.table);
      if (qualifier === undefined || !scope.qualifiers.includes(qualifier.toLowerCase())) throw sqlError(`Unknown table '${qualifier ?? '?'}' in SET.`);
    }
    const name = identifier(entry.column);
    if (name === undefined) throw sqlError('Unsupported column in SET.');
    const column = writableColumn(scope, name);
    if (column.name in set) throw sqlError(`Column '${column.name}' is set twice.`);
    set[column.name] = cellValue(entry.value, ctx, column);
  }
  return { kind: 'update', table: scope.table, set, where: whereOf(ast.where, scope, ctx) };
}

function planDelete(ast: Node, ctx: WriteContext): DeletePlan {
  refuseOrderAndLimit(ast, 'DELETE');
  const scope = singleTable(ast.from, ctx.tables);
  const targets = Array.isArray(ast.table) ? ast.table : [];
  if (targets.length > 1) throw sqlError('Only one table per statement is supported (no JOIN).');
  return { kind: 'delete', table: scope.table, where: whereOf(ast.where, scope, ctx) };
}

function whereOf(where: unknown, scope: TableScope, ctx: WriteContext): Fragment {
  if (where === null || where === undefined) return sql`(1 = 1)`;
  if (!isNode(where)) throw sqlError('Unsupported WHERE clause.');
  return compilePredicate(where, whereScope(scope, ctx.dialect, ctx.bindings));
}
