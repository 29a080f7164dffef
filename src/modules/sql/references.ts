/** Table and column references of a statement, resolved against the base's metadata only. */
import { isNode, type Node } from './parser.js';
import { resolveField, resolveTable, type Field, type SqlTable } from './schema.js';
import { sqlError } from './sql-error.js';
import { unescapeIdentifier } from './values.js';

export interface TableScope {
  table: SqlTable;
  /** Names a column may be qualified with: the table's name and its alias. */
  qualifiers: string[];
}

/** A name as the parser hands it: a string, or `{ type, value }` / `{ expr: { value } }` for quoted forms. */
export function identifier(value: unknown): string | undefined {
  if (typeof value === 'string') return unescapeIdentifier(value);
  if (isNode(value)) {
    if (typeof value.value === 'string') return unescapeIdentifier(value.value);
    if (isNode(value.expr) && typeof value.expr.value === 'string') return unescapeIdentifier(value.expr.value);
  }
  return undefined;
}

/** The single table of a FROM / INTO / UPDATE clause. Joins, subqueries and other databases are refused. */
export function singleTable(entries: unknown, tables: SqlTable[]): TableScope {
  if (!Array.isArray(entries) || entries.length === 0) throw sqlError('A table is required (FROM table).');
  if (entries.length > 1) throw sqlError('Only one table per statement is supported (no JOIN).');
  const entry = entries[0];
  if (!isNode(entry)) throw sqlError('Unsupported FROM clause.');
  if (entry.join !== undefined && entry.join !== null) throw sqlError('JOIN is not supported.');
  if (entry.expr !== undefined || entry.type === 'dual') throw sqlError('Subqueries are not supported.');
  if (entry.db !== null && entry.db !== undefined) throw sqlError('Only the tables of this base can be queried (no database or schema prefix).');
  if (entry.schema !== undefined && entry.schema !== null) throw sqlError('Only the tables of this base can be queried (no database or schema prefix).');
  const name = identifier(entry.table);
  if (name === undefined) throw sqlError('Unsupported table reference.');
  const table = resolveTable(tables, name);
  const alias = identifier(entry.as);
  return { table, qualifiers: [name, table.name, ...(alias ? [alias] : [])].map((q) => q.toLowerCase()) };
}

/** The column name of a `column_ref`, after checking its table qualifier. `*` is returned as is. */
export function columnName(node: Node, scope: TableScope): string {
  const qualifier = node.table === null || node.table === undefined ? undefined : identifier(node.table);
  if (node.table !== null && node.table !== undefined) {
    if (qualifier === undefined || !scope.qualifiers.includes(qualifier.toLowerCase())) {
      throw sqlError(`Unknown table '${qualifier ?? '?'}' in column reference.`);
    }
  }
  if (node.db !== undefined && node.db !== null) throw sqlError('Column references cannot name a database.');
  const name = identifier(node.column);
  if (name === undefined) throw sqlError('Unsupported column reference.');
  return name;
}

export function resolveColumnRef(node: Node, scope: TableScope): Field {
  const name = columnName(node, scope);
  if (name === '*') throw sqlError('* is only allowed as the whole select list or in COUNT(*).');
  return resolveField(scope.table, name);
}
