/**
 * Grouped statements answered from a group set (rows/group-sets.ts; docs/sql.md "Grouped queries from a
 * group set").
 *
 * A set holds, per group value of one column, the number of rows and the count and sum of one number
 * column's values. A grouped statement whose every field is that group column — in GROUP BY, DISTINCT,
 * WHERE, HAVING, ORDER BY, expressions, MIN/MAX and COUNT(DISTINCT …) — or the number column inside
 * COUNT, SUM or AVG, is planned by the usual planner (select.ts) over the set's rows instead of
 * `base_rows`: each set row stands for its `cnt` rows, which all have its group value, so
 * - a condition or group key on the group column reads the same value from the set row as from each of
 *   its rows (the set's group value is the GROUP BY value of sql/field-sql.ts);
 * - COUNT(*) is `sum(cnt)`, COUNT(group column) `sum(cnt)` over non-empty groups, COUNT/SUM/AVG of the
 *   number column `sum(vcnt)` / `sum(vsum)` / their quotient; MIN, MAX and COUNT(DISTINCT) of the group
 *   column are the same over the set's rows as over the table's;
 * and grouping, HAVING, ORDER BY, LIMIT and the output are the planner's own. Anything else (another
 * column, row fields, MIN of the number column, DISTINCT sums) throws NotFromSet while planning and the
 * statement reads the table. SUM and AVG are answered only while the set's values are exact integers
 * (`GroupSets.usable`), so the sums equal the scan's in any order of addition.
 */
import { sql } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { groupKindOf, summableType, type GroupSet, type GroupSetUse, type GroupSets } from '../rows/index.js';
import { C, optionRank, type FieldSql, type Fragment, type SetReading } from './field-sql.js';
import { isNode, type Node } from './parser.js';
import { selectOptions, type Field, type SqlColumn, type SqlTable } from './schema.js';
import { planSelect, type GroupedPlan, type SelectContext, type SelectPlan } from './select.js';

/** Thrown while planning over a set: the statement reads something the set does not hold. */
export class NotFromSet extends Error {}

const notFromSet = (what: string) => new NotFromSet(what);

/** The set's group value: PostgreSQL `txt` or `num`; SQLite `g` ('' for none). */
function groupValue(dialect: DialectName, set: GroupSet): Fragment {
  if (dialect === 'postgres') return set.groupKind === 'text' ? sql`txt` : set.groupKind === 'bool' ? sql`cast(num as integer)` : sql`num`;
  return sql`nullif(g, '')`;
}

/**
 * The set's rows, one per group value: its stored rows summed per value (PostgreSQL keeps a delta row per
 * write until compaction; SQLite one row per value).
 */
export function groupSetSource(dialect: DialectName, set: GroupSet): Fragment {
  const group = dialect === 'postgres' ? sql`num, txt` : sql`g`;
  return sql`(select ${group}, sum(cnt) as cnt, sum(vcnt) as vcnt, sum(vsum) as vsum from row_group_rows where set_id = ${set.id} group by ${group}) as rg`;
}

/** How a plan over `set`'s rows reads (see the file's comment); `sums` is set when it reads SUM or AVG. */
export function setReading(dialect: DialectName, set: GroupSet): SetReading & { sums: boolean } {
  const value = groupValue(dialect, set);
  const isGroup = (field: Field | undefined) => field?.kind === 'cell' && field.column.key === set.groupKey && field.column.type === set.groupType;
  const isValue = (field: Field | undefined) => field?.kind === 'cell' && set.valueKey !== undefined && field.column.key === set.valueKey && field.column.type === set.valueType;
  const count = (ref: Fragment) => (dialect === 'postgres' ? sql`cast(coalesce(sum(${ref}), 0) as bigint)` : sql`coalesce(sum(${ref}), 0)`);
  const reading = {
    sums: false,
    field(field: Field): FieldSql {
      if (!isGroup(field)) throw notFromSet(`${field.label} is not the set's group column`);
      const column = (field as { column: SqlColumn }).column;
      const isEmpty = sql`(${value} is null)`;
      switch (field.valueType) {
        case 'string': {
          const text = C(dialect, value);
          const sort = column.type === 'single-select' ? optionRank(dialect, text, selectOptions(column).map((o) => o.name)) : text;
          return { type: 'string', value: text, group: text, isEmpty, sort };
        }
        case 'number':
          return { type: 'number', value, group: value, isEmpty, sort: value };
        case 'bool':
          return { type: 'bool', value, group: value, isEmpty: sql`(1 = 0)`, sort: value };
        default:
          throw notFromSet(`${field.label} is not read from a set`);
      }
    },
    aggregate({ name, field, distinct }: { name: string; field?: Field; distinct: boolean }) {
      if (!field) return { inner: [{ id: 'set:cnt', expr: sql`cnt` }], outer: ([ref]: Fragment[]) => count(ref!) };
      if (isGroup(field)) {
        if (name === 'MIN' || name === 'MAX' || (name === 'COUNT' && distinct)) return undefined;
        if (name === 'COUNT') return { inner: [{ id: 'set:gcnt', expr: sql`(case when ${value} is null then 0 else cnt end)` }], outer: ([ref]: Fragment[]) => count(ref!) };
        throw notFromSet(`${name} of the group column`);
      }
      if (!isValue(field) || distinct) throw notFromSet(`${name} of ${field.label}`);
      const counted = { id: 'set:vcnt', expr: sql`vcnt` };
      if (name === 'COUNT') return { inner: [counted], outer: ([ref]: Fragment[]) => count(ref!) };
      const summed = { id: 'set:vsum', expr: sql`vsum` };
      if (name === 'SUM') {
        reading.sums = true;
        return { inner: [counted, summed], outer: ([n, s]: Fragment[]) => sql`(case when coalesce(sum(${n!}), 0) = 0 then null else sum(${s!}) end)` };
      }
      if (name === 'AVG') {
        reading.sums = true;
        const real = dialect === 'postgres' ? 'double precision' : 'real';
        return { inner: [counted, summed], outer: ([n, s]: Fragment[]) => sql`(case when coalesce(sum(${n!}), 0) = 0 then null else cast(sum(${s!}) as ${sql.raw(real)}) / cast(sum(${n!}) as ${sql.raw(real)}) end)` };
      }
      throw notFromSet(`${name} of ${field.label}`);
    },
  };
  return reading;
}

/** The GROUP BY's column names as written (to tell the group column from the number column). */
function groupByNames(ast: Node): string[] {
  const groupby = ast.groupby;
  const columns = Array.isArray(groupby) ? groupby : isNode(groupby) && Array.isArray(groupby.columns) ? groupby.columns : [];
  return columns.flatMap((c: unknown) => {
    if (!isNode(c) || c.type !== 'column_ref') return [];
    const column = c.column;
    const name = typeof column === 'string' ? column : isNode(column) && isNode(column.expr) ? column.expr.value : undefined;
    return typeof name === 'string' ? [name] : [];
  });
}

/**
 * The set a grouped plan could be answered from, by the fields it read: one group column, or a group
 * column and a number column (the GROUP BY tells which when both could group).
 */
export function groupSetUseOf(ast: Node, table: SqlTable, fields: readonly Field[]): GroupSetUse | undefined {
  if (fields.length === 0 || fields.some((f) => f.kind !== 'cell')) return undefined;
  const columns = [...new Map(fields.map((f) => [(f as { column: SqlColumn }).column.key, (f as { column: SqlColumn }).column])).values()];
  if (columns.length > 2) return undefined;
  const named = groupByNames(ast);
  const uses = columns.flatMap((group): GroupSetUse[] => {
    if (!groupKindOf(group.type)) return [];
    const other = columns.find((c) => c.key !== group.key);
    if (other && !summableType(other.type)) return [];
    return [{ groupKey: group.key, groupType: group.type, ...(other ? { valueKey: other.key, valueType: other.type } : {}) }];
  });
  if (uses.length <= 1) return uses[0];
  const byName = uses.filter((u) => {
    const column = table.columns.find((c) => c.key === u.groupKey);
    return column !== undefined && (named.includes(column.name) || named.includes(column.key));
  });
  return byName.length === 1 ? byName[0] : undefined;
}

/**
 * The decision: the plan of a grouped statement over the group set that answers it exactly, or undefined
 * (then the statement reads the table). `plan` is the statement's usual plan and `fields` what it read;
 * a big table's set is noted for building on the way.
 */
export async function answerFromGroupSet(
  sets: GroupSets,
  executor: Executor,
  ast: Node,
  ctx: SelectContext,
  plan: SelectPlan,
  fields: readonly Field[],
): Promise<GroupedPlan | undefined> {
  if (plan.kind !== 'grouped' || plan.fromIndex) return undefined;
  const use = groupSetUseOf(ast, plan.table, fields);
  if (!use) return undefined;
  sets.note(ctx.baseId, plan.table.id, use);
  const set = sets.find(ctx.baseId, plan.table.id, use);
  if (!set) return undefined;
  const reading = setReading(ctx.dialect, set);
  let fromSet: SelectPlan;
  try {
    fromSet = planSelect(ast, { ...ctx, noteColumn: undefined, cells: undefined, groupIndex: undefined, groupSet: { source: groupSetSource(ctx.dialect, set), reading } });
  } catch {
    // NotFromSet, or any refusal of the set's reading: the usual plan, which planned, answers.
    return undefined;
  }
  if (fromSet.kind !== 'grouped' || !fromSet.fromSet) return undefined;
  return (await sets.usable(set, reading.sums, executor)) ? fromSet : undefined;
}
