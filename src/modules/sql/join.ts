/**
 * Implicit inner joins, as the original documents them: `SELECT … FROM T1, T2 WHERE T1.a = T2.b AND …`.
 * One parameterized query over `base_rows` aliased once per table (t0, t1, …), every alias scoped to
 * the token's base and its table by bound ids. The original's rules are kept: tables are distinct,
 * no JOIN keyword, and every table is tied to the others by equality conditions between columns in
 * WHERE, joined with AND — a join without them (a cross join) is refused. The select list holds
 * columns (`T.col`, `col`, `T.*`, `*`); GROUP BY, aggregates, DISTINCT and computed items are refused.
 * Results are keyed `<table>.<column>` (names with convert_keys, else table id and column key);
 * each `metadata` entry has the result key as `key` and `id`, the column's `name`, and its table
 * (`table_id`, `table_name`). Rows are limited like any SELECT.
 */
import { sql } from 'kysely';
import { fieldSql, type Fragment } from './field-sql.js';
import { interruptible } from './interruptible.js';
import { selectWindow } from './limits.js';
import { fieldKey, fieldMetadata } from './output.js';
import { isNode, type Node } from './parser.js';
import { compilePredicate, type Operand } from './predicates.js';
import { identifier, singleTable, type TableScope } from './references.js';
import { fieldOfColumn, resolveField, type Field, type SqlTable } from './schema.js';
import { sqlError, SqlError } from './sql-error.js';
import type { SelectContext } from './select.js';

/** More tables multiply the work of every condition; the original's examples join two or three. */
export const MAX_JOIN_TABLES = 4;

export interface JoinOutput {
  key: string;
  /** The select item's alias, if any. */
  alias: string | null;
  /** Index of the table (and of its `base_rows` alias) the field is read from. */
  table: number;
  field: Field;
}

export interface JoinPlan {
  kind: 'join';
  tables: SqlTable[];
  query: Fragment;
  outputs: JoinOutput[];
  metadata: Record<string, unknown>[];
}

/** The FROM clause names several tables (or uses the JOIN keyword, which is refused in planJoin). */
export function isJoin(ast: Node): boolean {
  return Array.isArray(ast.from) && (ast.from.length > 1 || ast.from.some((e) => isNode(e) && e.join !== undefined && e.join !== null));
}

const alias = (i: number) => `t${i}`;

export function planJoin(ast: Node, ctx: SelectContext): JoinPlan {
  const entries = ast.from as unknown[];
  if (entries.some((e) => isNode(e) && e.join !== undefined && e.join !== null)) {
    throw sqlError('The JOIN keyword is not supported; write an implicit inner join: SELECT … FROM T1, T2 WHERE T1.a = T2.b.');
  }
  if (entries.length > MAX_JOIN_TABLES) throw sqlError(`A join can combine at most ${MAX_JOIN_TABLES} tables.`);
  const scopes = entries.map((entry) => singleTable([entry], ctx.tables));
  scopes.forEach((s, i) => {
    if (scopes.findIndex((o) => o.table.id === s.table.id) !== i) throw sqlError(`Table '${s.table.name}' appears twice in FROM; a join needs distinct tables.`);
  });
  refuseInJoin(ast);
  const resolve = (node: Node) => resolveJoinColumn(node, scopes);
  const scope = {
    dialect: ctx.dialect,
    bindings: ctx.bindings,
    timeZone: ctx.timeZone,
    clause: 'WHERE' as const,
    operand(node: Node): Operand {
      if (node.type !== 'column_ref') throw sqlError('Aggregates are not supported in a join.');
      const { table, field } = resolve(node);
      return { label: field.label, ...fieldSql(field, ctx.dialect, alias(table)) };
    },
  };
  if (!isNode(ast.where)) throw sqlError('A join needs its conditions in WHERE (T1.a = T2.b).');
  requireConnected(ast.where, scopes, resolve);
  const where = compilePredicate(ast.where, scope);

  const outputs = selectOutputs(ast.columns, scopes, resolve, ctx.convertKeys);
  const metadata = outputs.map((o) => {
    const entry = fieldMetadata(o.field, null);
    const table = scopes[o.table]!.table;
    // `key` (and `id`) is the result key, so clients that map result keys through metadata by `key`
    // (seatable-api's query()) find the column; `name` stays the column's (or the alias).
    return { ...entry, key: o.key, id: o.key, name: o.alias ?? entry.name, table_id: table.id, table_name: table.name };
  });

  const orders = orderTerms(ast.orderby, outputs, resolve, ctx.dialect);
  const window = selectWindow(ast.limit, ctx.bindings);
  const columns = scopes.map((_, i) => {
    const t = alias(i);
    return sql`${sql.ref(`${t}.row_id`)} as ${sql.ref(`r${i}`)}, ${sql.ref(`${t}.data`)} as ${sql.ref(`d${i}`)}, ${sql.ref(`${t}.ctime`)} as ${sql.ref(`c${i}`)}, ${sql.ref(`${t}.mtime`)} as ${sql.ref(`m${i}`)}, ${sql.ref(`${t}.creator`)} as ${sql.ref(`u${i}`)}, ${sql.ref(`${t}.last_modifier`)} as ${sql.ref(`l${i}`)}`;
  });
  const from = scopes.map((_, i) => sql`base_rows as ${sql.ref(alias(i))}`);
  const scoped = scopes.map((s, i) => sql`${sql.ref(`${alias(i)}.base_id`)} = ${ctx.baseId} and ${sql.ref(`${alias(i)}.table_id`)} = ${s.table.id}`);
  const tiebreak = scopes.map((_, i) => sql`${sql.ref(`${alias(i)}.id`)} asc`);
  const query = sql`select ${sql.join(columns)} from ${sql.join(from)} where ${sql.join(scoped, sql` and `)} and ${interruptible(ctx.dialect, scopes.map((_, i) => `${alias(i)}.id`))} and ${where} order by ${sql.join([...orders, ...tiebreak])} limit ${window.limit} offset ${window.offset}`;
  return { kind: 'join', tables: scopes.map((s) => s.table), query, outputs, metadata };
}

function refuseInJoin(ast: Node): void {
  const present = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);
  if (present(ast.groupby) && present((ast.groupby as { columns?: unknown }).columns ?? ast.groupby)) throw sqlError('GROUP BY is not supported in a join.');
  if (present(ast.having)) throw sqlError('HAVING is not supported in a join.');
  if (typeof ast.distinct === 'string' && ast.distinct.toUpperCase() === 'DISTINCT') throw sqlError('DISTINCT is not supported in a join.');
  if (ast._next !== undefined || ast.set_op !== undefined) throw sqlError('UNION, INTERSECT and EXCEPT are not supported.');
  if (ast.with !== null && ast.with !== undefined) throw sqlError('WITH is not supported.');
}

/** A column of one of the joined tables: qualified by table name or alias, or unqualified when only one table has it. */
function resolveJoinColumn(node: Node, scopes: TableScope[]): { table: number; field: Field } {
  if (node.db !== undefined && node.db !== null) throw sqlError('Column references cannot name a database.');
  const name = identifier(node.column);
  if (name === undefined) throw sqlError('Unsupported column reference.');
  if (name === '*') throw sqlError('* is only allowed in the select list.');
  if (node.table !== null && node.table !== undefined) {
    const qualifier = identifier(node.table)?.toLowerCase();
    const table = scopes.findIndex((s) => qualifier !== undefined && s.qualifiers.includes(qualifier));
    if (table < 0) throw sqlError(`Unknown table '${identifier(node.table) ?? '?'}' in column reference.`);
    return { table, field: resolveField(scopes[table]!.table, name) };
  }
  const found: Array<{ table: number; field: Field }> = [];
  scopes.forEach((s, table) => {
    try {
      found.push({ table, field: resolveField(s.table, name) });
    } catch (e) {
      if (!(e instanceof SqlError)) throw e;
    }
  });
  if (found.length === 0) throw sqlError(`Column '${name}' not found in the joined tables.`);
  if (found.length > 1) throw sqlError(`Column '${name}' is ambiguous: ${found.map((f) => scopes[f.table]!.table.name).join(', ')} have it; write Table.${name}.`);
  return found[0]!;
}

/** Top-level AND terms of WHERE. */
function andTerms(node: Node): Node[] {
  const out: Node[] = [];
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'binary_expr' && String(n.operator).toUpperCase() === 'AND' && isNode(n.left) && isNode(n.right)) stack.push(n.right, n.left);
    else out.push(n);
  }
  return out;
}

/** Every table must be tied to the others by `A.x = B.y` terms at the top level of WHERE (no cross join). */
function requireConnected(where: Node, scopes: TableScope[], resolve: (n: Node) => { table: number }): void {
  const parent = scopes.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  for (const term of andTerms(where)) {
    if (term.type !== 'binary_expr' || term.operator !== '=' || !isNode(term.left) || !isNode(term.right)) continue;
    if (term.left.type !== 'column_ref' || term.right.type !== 'column_ref') continue;
    const a = resolve(term.left).table;
    const b = resolve(term.right).table;
    if (a !== b) parent[root(a)] = root(b);
  }
  const loose = scopes.find((_, i) => root(i) !== root(0));
  if (loose) {
    throw sqlError(`Table '${loose.table.name}' has no join condition: tie every table to another with an equality between columns (T1.a = T2.b) in WHERE, joined with AND.`);
  }
}

function joinKey(scope: TableScope, field: Field, convertKeys: boolean): string {
  return `${convertKeys ? scope.table.name : scope.table.id}.${fieldKey(field, convertKeys)}`;
}

function selectOutputs(columns: unknown, scopes: TableScope[], resolve: (n: Node) => { table: number; field: Field }, convertKeys: boolean): JoinOutput[] {
  const everything = (table: number) => scopes[table]!.table.columns.map((c) => ({ table, field: fieldOfColumn(c) }));
  const fields: Array<{ table: number; field: Field; alias: string | null }> = [];
  if (columns === '*') {
    scopes.forEach((_, i) => fields.push(...everything(i).map((f) => ({ ...f, alias: null }))));
  } else {
    if (!Array.isArray(columns) || columns.length === 0) throw sqlError('The select list is empty.');
    for (const entry of columns) {
      const expr = isNode(entry) ? entry.expr : undefined;
      if (!isNode(expr) || expr.type !== 'column_ref') throw sqlError('A join can select columns only (no functions, expressions or aggregates).');
      const name = identifier(expr.column);
      const as = identifier((entry as Node).as) ?? null;
      if (name === '*') {
        if (as !== null) throw sqlError('* cannot have an alias.');
        const qualifier = identifier(expr.table)?.toLowerCase();
        const tables = qualifier === undefined ? scopes.map((_, i) => i) : [scopes.findIndex((s) => s.qualifiers.includes(qualifier))];
        if (tables[0]! < 0) throw sqlError(`Unknown table '${identifier(expr.table) ?? '?'}' in column reference.`);
        for (const t of tables) fields.push(...everything(t).map((f) => ({ ...f, alias: null })));
      } else {
        fields.push({ ...resolve(expr), alias: as });
      }
    }
  }
  return fields.map((f) => ({ key: f.alias ?? joinKey(scopes[f.table]!, f.field, convertKeys), alias: f.alias, table: f.table, field: f.field }));
}

function orderTerms(orderby: unknown, outputs: JoinOutput[], resolve: (n: Node) => { table: number; field: Field }, dialect: SelectContext['dialect']): Fragment[] {
  if (orderby === null || orderby === undefined) return [];
  if (!Array.isArray(orderby)) throw sqlError('Unsupported ORDER BY clause.');
  return orderby.map((entry) => {
    if (!isNode(entry) || !isNode(entry.expr)) throw sqlError('Unsupported ORDER BY clause.');
    const node = entry.expr;
    let target: { table: number; field: Field } | undefined;
    if (node.type === 'number') {
      const n = Number(node.value);
      if (!Number.isInteger(n) || n < 1 || n > outputs.length) throw sqlError(`Position ${String(node.value)} is not in the select list.`);
      target = outputs[n - 1];
    } else if (node.type === 'column_ref') {
      const name = (node.table === null || node.table === undefined) ? identifier(node.column) : undefined;
      target = outputs.find((o) => o.key === name) ?? resolve(node);
    } else {
      throw sqlError('ORDER BY in a join must name a column.');
    }
    if (target!.field.valueType === 'opaque') throw sqlError(`${target!.field.label} cannot be used in ORDER BY.`);
    const desc = String(entry.type).toUpperCase() === 'DESC';
    return sql`${fieldSql(target!.field, dialect, alias(target!.table)).sort} ${desc ? sql`desc nulls last` : sql`asc nulls first`}`;
  });
}
