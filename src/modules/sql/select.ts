/**
 * SELECT → one parameterized query over `base_rows`, scoped to the base and table by bound ids.
 * Two shapes:
 * - rows: no aggregate, GROUP BY or DISTINCT — returns whole stored rows, shaped in memory;
 * - grouped: the per-row values (group keys, aggregate arguments) are computed in an inner query and
 *   grouped by the plain inner column names outside, so no expression carrying bound parameters has to
 *   match between SELECT and GROUP BY (PostgreSQL cannot prove two parameters equal).
 * Every ORDER BY ends with a deterministic tiebreak, so both engines return rows in the same order.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { C, fieldSql, optionRank, type CellReading, type FieldSql, type Fragment, type SetReading } from './field-sql.js';
import { indexedGroupSource, type GroupIndex, type InnerRows } from './indexed-groups.js';
import { aggregateOf, labelOf, type Aggregate, type InnerColumns } from './aggregates.js';
import { containsAggregate, decodeExpression, expressionMetadata, expressionOperand, expressionShape, isExpression } from './select-expressions.js';
import { interruptible } from './interruptible.js';
import { isJoin, planJoin, type JoinPlan } from './join.js';
import { selectWindow } from './limits.js';
import { fieldKey, fieldMetadata, decodeGrouped } from './output.js';
import { isNode, type Node } from './parser.js';
import { compilePredicate, type Operand } from './predicates.js';
import { columnName, identifier, resolveColumnRef, singleTable, type TableScope } from './references.js';
import { sameField, selectOptions, type Field, type SqlColumn, type SqlTable } from './schema.js';
import { tableScope } from '../rows/index.js';
import { sqlError } from './sql-error.js';
import { constantOf, likeSearchRuns, type Bindings } from './values.js';
import { formulaCondition, formulaItem, formulaItemColumnType, needsFormulaEngine, type FormulaItem } from './formula-items.js';

export interface SelectContext {
  dialect: DialectName;
  tables: SqlTable[];
  baseId: number;
  bindings: Bindings;
  /** The statement text: aggregates are keyed by the text they were written as. */
  text: string;
  convertKeys: boolean;
  /** TIME_ZONE (date functions read dates there); UTC when not given. */
  timeZone?: string;
  /** The instant `now()` and `today()` read (default: the clock at evaluation). */
  now?: () => number;
  /** Told of each table column a WHERE compares (the row indexes follow such use). */
  noteColumn?: (tableId: string, column: SqlColumn) => void;
  /** How cells are read; its `read` is told of every field the plan reads (field-sql.ts). */
  cells?: CellReading;
  /** A grouped statement reading only this column: answered from its row index (indexed-groups.ts; SQLite). */
  groupIndex?: GroupIndex;
  /** A grouped statement answered from a group set's rows (group-set-plans.ts). */
  groupSet?: { source: Fragment; reading: SetReading };
  /** A condition on `base_rows` implied by the WHERE's LIKE terms (`searchTerms`), through the table's trigram index: added to it. */
  search?: Fragment;
}

/**
 * Rows a WHERE with formula-engine conditions may scan (after its SQL conditions): those conditions are
 * evaluated per row in the application, so LIMIT applies after them.
 */
export const FORMULA_SCAN_LIMIT = 50_000;

/** A top-level WHERE term a row index of the column `key` can answer (its whole compiled condition). */
export interface IndexTerm {
  key: string;
  where: RawBuilder<SqlBool>;
}

export interface RowsPlan {
  kind: 'rows';
  table: SqlTable;
  query: Fragment;
  /** The WHERE's terms a row index can answer (the SQL service probes and names the index; SQLite). */
  indexTerms?: IndexTerm[];
  /** Texts every row the WHERE accepts holds (its LIKE terms' literal runs, folded): a trigram index narrows by them. */
  searchTerms?: string[];
  /** null: `SELECT *` (every column plus the row fields). */
  outputs: Array<{ key: string; field: Field } | ComputedOutput | FormulaOutput> | null;
  metadata: Record<string, unknown>[];
  /**
   * Conditions of the WHERE the formula library evaluates (all must hold); the query then reads up to
   * FORMULA_SCAN_LIMIT + 1 rows and `window` is applied after them.
   */
  residual?: { conditions: FormulaItem[]; window: { limit: number; offset: number } };
}

/** A select item the formula library computes per row (see formula-items.ts). */
export interface FormulaOutput {
  key: string;
  formula: FormulaItem;
}

/** A column SQL computed (`column` of the query's row), decoded into the response value. */
export interface ComputedOutput {
  key: string;
  column: string;
  decode: (raw: unknown) => unknown;
}

export interface GroupedPlan {
  kind: 'grouped';
  /** True when the query reads a group set's rows (group-set-plans.ts). */
  fromSet?: boolean;
  /** True when the query reads the grouped column's row index (indexed-groups.ts). */
  fromIndex?: boolean;
  table: SqlTable;
  query: Fragment;
  indexTerms?: IndexTerm[];
  searchTerms?: string[];
  outputs: Array<{ key: string; column: string; decode: (raw: unknown) => unknown }>;
  metadata: Record<string, unknown>[];
}

export type SelectPlan = RowsPlan | GroupedPlan | JoinPlan;

type Item =
  | { kind: 'star' }
  | { kind: 'field'; field: Field; alias: string | null }
  | { kind: 'aggregate'; node: Node; alias: string | null }
  | { kind: 'expression'; node: Node; alias: string | null; label: string };

const ROW_COLUMNS = sql`id, row_id, data, ctime, mtime, creator, last_modifier`;

export function planSelect(ast: Node, ctx: SelectContext): SelectPlan {
  refuseUnsupportedClauses(ast);
  if (isJoin(ast)) return planJoin(ast, ctx);
  const scope = singleTable(ast.from, ctx.tables);
  const { pushed, residual } = splitWhere(ast.where, scope);
  const conditions = [...pushed.map((node) => whereCondition(node, scope, ctx)), ...(ctx.search ? [ctx.search] : [])];
  const where = conditions.length > 0 ? sql.join(conditions, sql` and `) : sql`(1 = 1)`;
  const indexTerms = pushed.flatMap((node, i): IndexTerm[] => {
    const key = indexedComparison(node, scope, ctx.dialect);
    return key === undefined ? [] : [{ key, where: conditions[i]! as RawBuilder<SqlBool> }];
  });
  const searchTerms = [...new Set(pushed.flatMap((node) => likeSearchTerms(node, scope, ctx.bindings)))];
  const items = selectItems(ast.columns, scope, ctx.text);
  const groupNodes = groupByNodes(ast.groupby);
  const distinct = typeof ast.distinct === 'string' && ast.distinct.toUpperCase() === 'DISTINCT';
  const grouped = distinct || groupNodes.length > 0 || isNode(ast.having) || items.some((i) => i.kind === 'aggregate' || (i.kind === 'expression' && containsAggregate(i.node)));
  // The base and table as literals (tableScope): the form in which a table's row indexes are found.
  const filterOf = (where: Fragment) => sql`${tableScope(ctx.baseId, scope.table.id)} and ${interruptible(ctx.dialect, ['base_rows.id'])} and ${where}`;
  const filter = filterOf(where);
  const window = selectWindow(ast.limit, ctx.bindings);
  if (grouped) {
    const formulaNode = [...residual, ...items.flatMap((i) => (i.kind === 'expression' && needsFormulaEngine(i.node, scope) ? [i.node] : []))][0];
    if (formulaNode) throw sqlError('Functions computed by the formula engine (see docs/sql.md) cannot be combined with GROUP BY, DISTINCT or aggregates.');
    const page = sql`limit ${window.limit} offset ${window.offset}`;
    if (ctx.groupSet) {
      // The same statement over the set's rows (one per group value), every field read from them.
      const setCtx: SelectContext = { ...ctx, cells: { groupSet: ctx.groupSet.reading }, noteColumn: undefined };
      const setWhere = pushed.map((node) => whereCondition(node, scope, setCtx));
      const parts = planGrouped(ast, setCtx, scope, items, groupNodes, distinct, page);
      const rows = sql`cnt > 0${setWhere.length > 0 ? sql` and ${sql.join(setWhere, sql` and `)}` : sql``}`;
      return { ...parts.plan, fromSet: true, query: parts.outer(parts.rows(ctx.groupSet.source, rows)) };
    }
    const exact = planGrouped(ast, ctx, scope, items, groupNodes, distinct, page);
    if (!ctx.groupIndex || ctx.dialect !== 'sqlite') return { ...exact.plan, query: exact.outer(exact.rows(sql`base_rows`, filter)), indexTerms, searchTerms };
    // The same statement with the column's cells read off its index; run where that reading is exact.
    const indexCtx: SelectContext = { ...ctx, cells: { fromIndex: ctx.groupIndex.key }, noteColumn: undefined };
    const indexWhere = pushed.map((node) => whereCondition(node, scope, indexCtx));
    const fromIndex = planGrouped(ast, indexCtx, scope, items, groupNodes, distinct, page);
    const source = indexedGroupSource(
      ctx.groupIndex,
      { rows: fromIndex.rows, where: filterOf(indexWhere.length > 0 ? sql.join(indexWhere, sql` and `) : sql`(1 = 1)`) },
      { rows: exact.rows, where: filter },
    );
    return { ...exact.plan, fromIndex: true, query: exact.outer(source) };
  }
  if (residual.length === 0) return { ...planRows(ast, ctx, scope, items, filter, sql`limit ${window.limit} offset ${window.offset}`), indexTerms, searchTerms };
  const formulaConditions = residual.map((node) => formulaCondition(node, scope, ctx.bindings, ctx.timeZone ?? 'UTC', ctx.now ?? Date.now));
  const plan = planRows(ast, ctx, scope, items, filter, sql`limit ${FORMULA_SCAN_LIMIT + 1}`);
  return { ...plan, indexTerms, searchTerms, residual: { conditions: formulaConditions, window } };
}

/** Column types whose cell is stored as the very text a LIKE reads (so the pattern's literal runs are in the row's text). */
const SEARCHABLE_TYPES = new Set(['text', 'long-text', 'email', 'url']);

/** The literal runs of a top-level `column LIKE|ILIKE constant` on such a column (values.ts `likeSearchRuns`). */
function likeSearchTerms(node: Node, scope: TableScope, bindings: Bindings): string[] {
  const op = String(node.operator).toUpperCase();
  if (node.type !== 'binary_expr' || (op !== 'LIKE' && op !== 'ILIKE') || !isNode(node.left) || !isNode(node.right) || node.left.type !== 'column_ref') return [];
  const field = resolveColumnRef(node.left, scope);
  if (field.kind !== 'cell' || !SEARCHABLE_TYPES.has(field.column.type)) return [];
  const pattern = constantOf(node.right, bindings);
  return typeof pattern === 'string' ? likeSearchRuns(pattern) : [];
}

const INDEXED_COMPARISONS = new Set(['=', '<', '<=', '>', '>=']);

/**
 * The column key of a WHERE term that compares one indexable cell (number, text, single select) with a
 * value (`Amount > 5`, `3 <= Amount`): its compiled condition carries the row index's expression
 * (predicates.ts), so a row index of that column can answer it.
 */
function indexedComparison(node: Node, scope: TableScope, dialect: DialectName): string | undefined {
  if (node.type !== 'binary_expr' || !INDEXED_COMPARISONS.has(String(node.operator)) || !isNode(node.left) || !isNode(node.right)) return undefined;
  const columns = [node.left, node.right].filter((side) => side.type === 'column_ref');
  if (columns.length !== 1 || isExpression(node.left === columns[0] ? node.right : node.left)) return undefined;
  const field = resolveColumnRef(columns[0]!, scope);
  return field.kind === 'cell' && fieldSql(field, dialect).indexed ? field.column.key : undefined;
}

/** The WHERE's top-level AND terms: those SQL computes, and those the formula library evaluates per row. */
function splitWhere(where: unknown, scope: TableScope): { pushed: Node[]; residual: Node[] } {
  if (where === null || where === undefined) return { pushed: [], residual: [] };
  if (!isNode(where)) throw sqlError('Unsupported WHERE clause.');
  const terms: Node[] = [];
  const stack: Node[] = [where];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const parenthesized = node.parentheses === true;
    if (node.type === 'binary_expr' && String(node.operator).toUpperCase() === 'AND' && !parenthesized && isNode(node.left) && isNode(node.right)) stack.push(node.right, node.left);
    else terms.push(node);
  }
  return { pushed: terms.filter((t) => !needsFormulaEngine(t, scope)), residual: terms.filter((t) => needsFormulaEngine(t, scope)) };
}

function refuseUnsupportedClauses(ast: Node): void {
  if (ast._next !== undefined || ast.set_op !== undefined) throw sqlError('UNION, INTERSECT and EXCEPT are not supported.');
  if (ast.with !== null && ast.with !== undefined) throw sqlError('WITH is not supported.');
  if (ast.options !== null && ast.options !== undefined) throw sqlError('SELECT options are not supported.');
  if (isNode(ast.into) && ast.into.position !== null && ast.into.position !== undefined) throw sqlError('SELECT … INTO is not supported.');
  if (ast.locking_read !== null && ast.locking_read !== undefined) throw sqlError('Locking reads are not supported.');
  if (ast.window !== null && ast.window !== undefined) throw sqlError('Window functions are not supported.');
  if (ast.collate !== null && ast.collate !== undefined) throw sqlError('COLLATE is not supported.');
}

function whereCondition(node: unknown, scope: TableScope, ctx: SelectContext): Fragment {
  if (!isNode(node)) throw sqlError('Unsupported WHERE clause.');
  return compilePredicate(node, whereScope(scope, ctx.dialect, ctx.bindings, ctx.timeZone, ctx.noteColumn, ctx.cells));
}

/** WHERE resolves columns of the table; aggregates are refused there. */
export function whereScope(scope: TableScope, dialect: DialectName, bindings: Bindings, timeZone?: string, noteColumn?: SelectContext['noteColumn'], cells?: CellReading) {
  return {
    dialect,
    bindings,
    timeZone,
    clause: 'WHERE' as const,
    operand(node: Node): Operand {
      if (node.type !== 'column_ref') throw sqlError(`Aggregate ${String(node.name)} is not allowed in WHERE.`);
      const field = resolveColumnRef(node, scope);
      if (field.kind === 'cell') noteColumn?.(scope.table.id, field.column);
      return { label: field.label, ...fieldSql(field, dialect, undefined, cells) };
    },
  };
}

function selectItems(columns: unknown, scope: TableScope, text: string): Item[] {
  if (columns === '*') return [{ kind: 'star' }];
  if (!Array.isArray(columns) || columns.length === 0) throw sqlError('The select list is empty.');
  return columns.map((entry): Item => {
    const expr = isNode(entry) ? entry.expr : undefined;
    if (!isNode(expr)) throw sqlError('Unsupported select list.');
    const alias = identifier((entry as Node).as) ?? null;
    if (expr.type === 'column_ref' && columnName(expr, scope) === '*') {
      if (alias !== null) throw sqlError('* cannot have an alias.');
      return { kind: 'star' };
    }
    if (expr.type === 'column_ref') return { kind: 'field', field: resolveColumnRef(expr, scope), alias };
    if (expr.type === 'aggr_func') return { kind: 'aggregate', node: expr, alias };
    if (expr.ast !== undefined) throw sqlError('Subqueries are not supported.');
    if (isExpression(expr)) return { kind: 'expression', node: expr, alias, label: labelOf(expr, text, 'expression') };
    throw sqlError('Only columns, expressions and COUNT, SUM, AVG, MIN, MAX can be selected.');
  });
}

function groupByNodes(groupby: unknown): Node[] {
  if (groupby === null || groupby === undefined) return [];
  const columns = Array.isArray(groupby) ? groupby : (groupby as { columns?: unknown }).columns;
  if (!Array.isArray(columns)) return [];
  return columns.filter(isNode);
}

function orderByEntries(orderby: unknown): Array<{ node: Node; desc: boolean }> {
  if (orderby === null || orderby === undefined) return [];
  if (!Array.isArray(orderby)) throw sqlError('Unsupported ORDER BY clause.');
  return orderby.map((entry) => {
    if (!isNode(entry) || !isNode(entry.expr)) throw sqlError('Unsupported ORDER BY clause.');
    return { node: entry.expr, desc: String(entry.type).toUpperCase() === 'DESC' };
  });
}

/** A 1-based position in the select list (`ORDER BY 2`), or undefined. */
function ordinal(node: Node, count: number): number | undefined {
  if (node.type !== 'number') return undefined;
  const n = Number(node.value);
  if (!Number.isInteger(n) || n < 1 || n > count) throw sqlError(`Position ${String(node.value)} is not in the select list.`);
  return n - 1;
}

/** An unqualified name that is one of the select list's aliases. */
function aliasIndex(node: Node, items: Item[]): number | undefined {
  if (node.type !== 'column_ref' || (node.table !== null && node.table !== undefined)) return undefined;
  const name = identifier(node.column);
  const index = items.findIndex((i) => i.kind !== 'star' && i.alias === name);
  return index >= 0 ? index : undefined;
}

const direction = (desc: boolean) => (desc ? sql`desc nulls last` : sql`asc nulls first`);

function planRows(ast: Node, ctx: SelectContext, scope: TableScope, items: Item[], filter: Fragment, page: Fragment): RowsPlan {
  const star = items.some((i) => i.kind === 'star');
  if (star && items.length > 1) throw sqlError('* cannot be combined with other select items.');
  const rowScope = whereScope(scope, ctx.dialect, ctx.bindings, ctx.timeZone);
  const computed = new Map<number, Operand>();
  const formulas = new Map<number, FormulaItem>();
  items.forEach((item, index) => {
    if (item.kind !== 'expression') return;
    if (needsFormulaEngine(item.node, scope)) formulas.set(index, formulaItem(item.node, scope, ctx.bindings, ctx.timeZone ?? 'UTC', ctx.now ?? Date.now));
    else computed.set(index, expressionOperand(item.node, rowScope));
  });
  const formulaOrder = () => sqlError('ORDER BY cannot use functions computed by the formula engine (see docs/sql.md).');
  const orders = orderByEntries(ast.orderby).map(({ node, desc }) => {
    const index = ordinal(node, items.length) ?? aliasIndex(node, items);
    let field: Field;
    if ((index !== undefined && formulas.has(index)) || (index === undefined && needsFormulaEngine(node, scope))) throw formulaOrder();
    if (index !== undefined && computed.has(index)) {
      return sql`${computed.get(index)!.value} ${direction(desc)}`;
    } else if (index !== undefined) {
      const item = items[index]!;
      if (item.kind !== 'field') throw sqlError('ORDER BY must name a column.');
      field = item.field;
    } else if (isExpression(node) && !containsAggregate(node)) {
      return sql`${expressionOperand(node, rowScope).value} ${direction(desc)}`;
    } else if (node.type === 'column_ref') {
      field = resolveColumnRef(node, scope);
    } else if (node.type === 'aggr_func') {
      throw sqlError('Aggregates in ORDER BY need an aggregate or GROUP BY query.');
    } else {
      throw sqlError('ORDER BY must name a column.');
    }
    if (field.valueType === 'opaque') throw sqlError(`${field.label} cannot be used in ORDER BY.`);
    return sql`${fieldSql(field, ctx.dialect).sort} ${direction(desc)}`;
  });
  const extra = [...computed].map(([index, op]) => sql`, ${op.value} as ${sql.ref(`e${index}`)}`);
  const query = sql`select ${ROW_COLUMNS}${sql.join(extra, sql``)} from base_rows where ${filter} order by ${sql.join([...orders, sql`id asc`])} ${page}`;
  if (star) {
    return { kind: 'rows', table: scope.table, query, outputs: null, metadata: scope.table.columns.map((c) => ({ ...c.meta })) };
  }
  const outputs: NonNullable<RowsPlan['outputs']> = [];
  const metadata: Record<string, unknown>[] = [];
  items.forEach((item, index) => {
    if (item.kind === 'field') {
      outputs.push({ key: item.alias ?? fieldKey(item.field, ctx.convertKeys), field: item.field });
      metadata.push(fieldMetadata(item.field, item.alias));
    } else if (item.kind === 'expression' && formulas.has(index)) {
      const formula = formulas.get(index)!;
      const key = item.alias ?? item.label;
      outputs.push({ key, formula });
      metadata.push({ key, name: key, type: formulaItemColumnType(formula.type), data: null });
    } else if (item.kind === 'expression') {
      const type = computed.get(index)!.type;
      const key = item.alias ?? item.label;
      outputs.push({ key, column: `e${index}`, decode: decodeExpression(type) });
      metadata.push(expressionMetadata(key, type));
    }
  });
  return { kind: 'rows', table: scope.table, query, outputs, metadata };
}

interface GroupKey {
  field: Field;
  column: string;
  sql: FieldSql;
  /** A multiple-select column in GROUP BY: one group per option (the key is one option name). */
  perOption?: boolean;
}

/**
 * The options of a multiple-select cell as rows (`alias.value`), joined to each row of the inner query:
 * a row with options `a` and `b` counts in group `a` and in group `b`, as the original groups; a row with
 * none joins one NULL (the empty group).
 */
function optionRows(dialect: DialectName, key: string, alias: string): Fragment {
  if (dialect === 'postgres') {
    const json = sql`(base_rows.data -> cast(${key} as text))`;
    return sql`left join lateral jsonb_array_elements_text(case when jsonb_typeof(${json}) = 'array' then ${json} else '[]'::jsonb end) as ${sql.ref(alias)}(value) on true`;
  }
  const path = `$."${key}"`;
  return sql`left join json_each(case when json_type(base_rows.data, ${path}) = 'array' then json_extract(base_rows.data, ${path}) else '[]' end) as ${sql.ref(alias)}`;
}

/** A grouped plan: its inner query's rows over a source, and the grouping query around them. */
interface GroupedParts {
  plan: Omit<GroupedPlan, 'query'>;
  rows: InnerRows;
  outer: (source: Fragment) => Fragment;
}

function planGrouped(ast: Node, ctx: SelectContext, scope: TableScope, items: Item[], groupNodes: Node[], distinct: boolean, page: Fragment): GroupedParts {
  if (items.some((i) => i.kind === 'star')) throw sqlError('* cannot be used with DISTINCT, GROUP BY or aggregates.');
  const inner: InnerColumns = { fragments: [], names: new Map() };
  const keys: GroupKey[] = [];
  const joins: Fragment[] = [];
  const addKey = (field: Field, groupBy = false): GroupKey => {
    const existing = keys.find((k) => sameField(k.field, field));
    if (existing) return existing;
    if (field.valueType === 'opaque') throw sqlError(`${field.label} cannot be used in GROUP BY or DISTINCT.`);
    const key: GroupKey = { field, column: `g${keys.length}`, sql: fieldSql(field, ctx.dialect, undefined, ctx.cells) };
    if (groupBy && field.kind === 'cell' && field.column.type === 'multiple-select') {
      const alias = `m${joins.length}`;
      joins.push(optionRows(ctx.dialect, field.column.key, alias));
      key.perOption = true;
      inner.fragments.push(sql`nullif(${sql.ref(`${alias}.value`)}, '') as ${sql.ref(key.column)}`);
    } else {
      inner.fragments.push(sql`${key.sql.group} as ${sql.ref(key.column)}`);
    }
    keys.push(key);
    return key;
  };

  /** GROUP BY expressions: computed per row in the inner query, matched to select items by shape. */
  const expressionKeys: Array<{ shape: string; column: string; type: Operand['type'] }> = [];
  const addExpressionKey = (node: Node): void => {
    if (containsAggregate(node)) throw sqlError('Aggregates are not allowed in GROUP BY.');
    const shape = expressionShape(node);
    if (expressionKeys.some((k) => k.shape === shape)) return;
    const op = expressionOperand(node, whereScope(scope, ctx.dialect, ctx.bindings, ctx.timeZone, undefined, ctx.cells));
    const column = `x${expressionKeys.length}`;
    inner.fragments.push(sql`${op.value} as ${sql.ref(column)}`);
    expressionKeys.push({ shape, column, type: op.type });
  };
  const expressionKeyOf = (node: Node) => {
    const shape = expressionShape(node);
    return expressionKeys.find((k) => k.shape === shape);
  };

  for (const node of groupNodes) {
    const index = ordinal(node, items.length) ?? aliasIndex(node, items);
    if (index !== undefined) {
      const item = items[index]!;
      if (item.kind === 'expression') addExpressionKey(item.node);
      else if (item.kind !== 'field') throw sqlError('GROUP BY must name a column or an expression.');
      else addKey(item.field, true);
    } else if (isExpression(node)) {
      addExpressionKey(node);
    } else if (node.type === 'column_ref') {
      addKey(resolveColumnRef(node, scope), true);
    } else {
      throw sqlError('GROUP BY must name a column or an expression.');
    }
  }
  const hasGroupBy = groupNodes.length > 0;
  const aggregated = items.some((i) => i.kind === 'aggregate') || isNode(ast.having);
  // DISTINCT groups by the selected columns; with aggregates and no GROUP BY there is one row anyway,
  // and with GROUP BY the rows are already distinct when every group key is selected.
  if (distinct && !hasGroupBy && !aggregated) for (const item of items) if (item.kind === 'field') addKey(item.field);
  if (distinct && hasGroupBy && !keys.every((k) => items.some((i) => i.kind === 'field' && sameField(i.field, k.field)))) {
    throw sqlError('DISTINCT with GROUP BY needs every GROUP BY column in the select list.');
  }

  const aggregate = (node: Node): Aggregate => aggregateOf(node, scope, ctx.dialect, inner, ctx.text, ctx.cells);
  const keyFor = (field: Field): GroupKey => {
    const key = keys.find((k) => sameField(k.field, field));
    if (!key) throw sqlError(`${field.label} must appear in GROUP BY or be used in an aggregate.`);
    return key;
  };
  const keyRef = (key: GroupKey) => C(ctx.dialect, sql.ref(key.column));
  const keySort = (key: GroupKey): Fragment => {
    const column = key.field.kind === 'cell' && key.field.column.type === 'single-select' ? key.field.column : undefined;
    const ref = key.field.valueType === 'string' || key.field.valueType === 'date' || key.field.valueType === 'list' ? keyRef(key) : sql.ref(key.column);
    return optionRank(ctx.dialect, ref, selectOptions(column).map((o) => o.name));
  };

  /** Group keys and aggregates as operands (HAVING conditions and computed select items read them). */
  const groupScope = (clause: 'HAVING' | 'WHERE') => ({
    dialect: ctx.dialect,
    bindings: ctx.bindings,
    timeZone: ctx.timeZone,
    clause: 'HAVING' as const,
    operand(node: Node): Operand {
      const index = aliasIndex(node, items);
      const target = index !== undefined ? items[index]! : undefined;
      if (target?.kind === 'aggregate' || node.type === 'aggr_func') {
        const agg = aggregate(target?.kind === 'aggregate' ? target.node : node);
        return { label: agg.label, type: agg.valueType, value: agg.sql, isEmpty: sql`(${agg.sql} is null)` };
      }
      if (node.type !== 'column_ref') throw sqlError(`Unsupported expression in ${clause === 'HAVING' ? 'HAVING' : 'the select list'}.`);
      const key = keyFor(target?.kind === 'field' ? target.field : resolveColumnRef(node, scope));
      if (key.sql.type === 'list') throw sqlError(`${key.field.label} cannot be used in ${clause === 'HAVING' ? 'HAVING' : 'an expression'}.`);
      const value = key.sql.type === 'string' || key.sql.type === 'date' ? keyRef(key) : sql.ref(key.column);
      return { label: key.field.label, type: key.sql.type, value, isEmpty: sql`(${sql.ref(key.column)} is null)` };
    },
  });

  const outputs: GroupedPlan['outputs'] = [];
  const selectList: Fragment[] = [];
  const metadata: Record<string, unknown>[] = [];
  const outputSort: Fragment[] = [];
  items.forEach((item, index) => {
    const column = `c${index}`;
    if (item.kind === 'field') {
      const key = keyFor(item.field);
      selectList.push(sql`${sql.ref(key.column)} as ${sql.ref(column)}`);
      outputSort.push(keySort(key));
      const decode = key.perOption ? (raw: unknown) => (raw === null || raw === undefined ? null : decodeGrouped(item.field, JSON.stringify([raw]), ctx.convertKeys)) : (raw: unknown) => decodeGrouped(item.field, raw, ctx.convertKeys);
      outputs.push({ key: item.alias ?? fieldKey(item.field, ctx.convertKeys), column, decode });
      metadata.push(fieldMetadata(item.field, item.alias));
    } else if (item.kind === 'aggregate') {
      const agg = aggregate(item.node);
      selectList.push(sql`${agg.sql} as ${sql.ref(column)}`);
      outputSort.push(agg.sql);
      const key = item.alias ?? agg.label;
      outputs.push({ key, column, decode: agg.decode(ctx.convertKeys) });
      metadata.push({ key, name: key, type: agg.columnType, data: agg.columnData });
    } else if (item.kind === 'expression' && expressionKeyOf(item.node)) {
      const key = expressionKeyOf(item.node)!;
      selectList.push(sql`${sql.ref(key.column)} as ${sql.ref(column)}`);
      outputSort.push(sql.ref(key.column));
      const name = item.alias ?? item.label;
      outputs.push({ key: name, column, decode: decodeExpression(key.type) });
      metadata.push(expressionMetadata(name, key.type));
    } else if (item.kind === 'expression') {
      const op = expressionOperand(item.node, groupScope('WHERE'));
      selectList.push(sql`${op.value} as ${sql.ref(column)}`);
      outputSort.push(op.value);
      const key = item.alias ?? item.label;
      outputs.push({ key, column, decode: decodeExpression(op.type) });
      metadata.push(expressionMetadata(key, op.type));
    }
  });

  const having = isNode(ast.having) ? compilePredicate(ast.having, groupScope('HAVING')) : undefined;

  const orders = orderByEntries(ast.orderby).map(({ node, desc }) => {
    const index = ordinal(node, items.length) ?? aliasIndex(node, items);
    if (index !== undefined) return sql`${outputSort[index]!} ${direction(desc)}`;
    if (node.type === 'aggr_func') return sql`${aggregate(node).sql} ${direction(desc)}`;
    if (node.type === 'column_ref') return sql`${keySort(keyFor(resolveColumnRef(node, scope)))} ${direction(desc)}`;
    const expressionKey = isExpression(node) ? expressionKeyOf(node) : undefined;
    if (expressionKey) return sql`${sql.ref(expressionKey.column)} ${direction(desc)}`;
    if (isExpression(node)) return sql`${expressionOperand(node, groupScope('WHERE')).value} ${direction(desc)}`;
    throw sqlError('ORDER BY must name a selected column, a GROUP BY column or an aggregate.');
  });
  for (const key of keys) orders.push(sql`${keySort(key)} asc nulls first`);
  for (const key of expressionKeys) orders.push(sql`${sql.ref(key.column)} asc nulls first`);

  if (inner.fragments.length === 0) inner.fragments.push(sql`1 as one`);
  const rows: InnerRows = (from, where) => sql`select ${sql.join(inner.fragments)} from ${from} ${joins.length > 0 ? sql.join(joins, sql` `) : sql``} where ${where}`;
  const groupColumns = [...keys.map((k) => k.column), ...expressionKeys.map((k) => k.column)];
  const groupBy = groupColumns.length > 0 ? sql`group by ${sql.join(groupColumns.map((c) => sql.ref(c)))}` : sql``;
  const havingSql = having ? sql`having ${having}` : sql``;
  const orderSql = orders.length > 0 ? sql`order by ${sql.join(orders)}` : sql``;
  const outer = (source: Fragment) => sql`select ${sql.join(selectList)} from (${source}) as s ${groupBy} ${havingSql} ${orderSql} ${page}`;
  return { plan: { kind: 'grouped', table: scope.table, outputs, metadata }, rows, outer };
}
