/**
 * Compiles a filter to a WHERE expression over `base_rows` (columns `data`, `ctime`, `mtime`, `creator`,
 * `last_modifier`) for SQLite (`data` is JSON text) and PostgreSQL (`data` is JSONB). Every value —
 * column keys and JSON paths included — is a bound parameter; only fixed SQL text is written inline.
 * Each leaf is wrapped in coalesce(…, false) so NULLs never leak into NOT/AND/OR: the SQL answer is
 * exactly the boolean `evaluate()` computes for the same leaf.
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { resolveCondition } from './resolve.js';
import type { CompiledFilter, Condition, DateUnit, FilterContext, NumberComparison, Source } from './types.js';

type Fragment = RawBuilder<unknown>;
type Dialect = 'sqlite' | 'postgres';

const COMPARISONS: Record<NumberComparison, Fragment> = {
  '=': sql.raw('='),
  '<': sql.raw('<'),
  '<=': sql.raw('<='),
  '>': sql.raw('>'),
  '>=': sql.raw('>='),
};

/** Column access and leaf compilers of one dialect. */
interface LeafCompiler {
  empty(key: string): Fragment;
  textContains(key: string, folded: string): Fragment;
  oneOf(key: string, values: string[]): Fragment;
  numCompare(key: string, cmp: NumberComparison, value: number): Fragment;
  isTrue(key: string): Fragment;
  hasAny(key: string, values: string[]): Fragment;
  hasAll(key: string, values: string[]): Fragment;
  hasExactly(key: string, values: string[]): Fragment;
  dateValid(key: string): Fragment;
  dateKey(key: string, unit: DateUnit): Fragment;
}

const list = (values: string[]) => sql.join(values.map((v) => sql`${v}`));

const SQLITE_DAY_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]';
const SQLITE_MINUTE_GLOB = `${SQLITE_DAY_GLOB} [0-9][0-9]:[0-9][0-9]`;

function sqliteCompiler(data: Fragment): LeafCompiler {
  const path = (key: string) => `$."${key}"`;
  const type = (key: string) => sql`json_type(${data}, ${path(key)})`;
  const value = (key: string) => sql`json_extract(${data}, ${path(key)})`;
  const elements = (key: string) => sql`json_each(${data}, ${path(key)})`;
  const hasAll = (key: string, values: string[]) =>
    sql`(${type(key)} = 'array' and (select count(distinct je.value) from ${elements(key)} as je where je.type = 'text' and je.value in (${list(values)})) = ${values.length})`;
  return {
    empty: (key) =>
      sql`(coalesce(${type(key)}, 'null') = 'null' or (${type(key)} = 'text' and ${value(key)} = '') or (${type(key)} = 'array' and json_array_length(${data}, ${path(key)}) = 0))`,
    // SQLite's lower() folds ASCII letters only, the same rule as asciiLower().
    textContains: (key, folded) => sql`(${type(key)} = 'text' and instr(lower(${value(key)}), ${folded}) > 0)`,
    oneOf: (key, values) => sql`(${type(key)} = 'text' and ${value(key)} in (${list(values)}))`,
    numCompare: (key, cmp, n) => sql`(${type(key)} in ('integer', 'real') and ${value(key)} ${COMPARISONS[cmp]} ${n})`,
    isTrue: (key) => sql`(${type(key)} = 'true')`,
    hasAny: (key, values) =>
      sql`(${type(key)} = 'array' and exists (select 1 from ${elements(key)} as je where je.type = 'text' and je.value in (${list(values)})))`,
    hasAll,
    hasExactly: (key, values) =>
      sql`(${hasAll(key, values)} and not exists (select 1 from ${elements(key)} as je where not (je.type = 'text' and je.value in (${list(values)}))))`,
    dateValid: (key) => sql`(${type(key)} = 'text' and substr(${value(key)}, 1, 10) glob ${SQLITE_DAY_GLOB})`,
    dateKey: (key, unit) =>
      unit === 'day'
        ? sql`substr(${value(key)}, 1, 10)`
        : sql`(case when substr(${value(key)}, 1, 16) glob ${SQLITE_MINUTE_GLOB} then substr(${value(key)}, 1, 16) else substr(${value(key)}, 1, 10) || ' 00:00' end)`,
  };
}

const PG_DAY_REGEX = '^[0123456789]{4}-[0123456789]{2}-[0123456789]{2}';
const PG_MINUTE_REGEX = `${PG_DAY_REGEX} [0123456789]{2}:[0123456789]{2}`;

function postgresCompiler(data: Fragment): LeafCompiler {
  const json = (key: string) => sql`(${data} -> ${key}::text)`;
  const text = (key: string) => sql`(${data} ->> ${key}::text)`;
  const type = (key: string) => sql`jsonb_typeof(${json(key)})`;
  const array = (values: string[]) => sql`array[${sql.join(values.map((v) => sql`${v}::text`))}]::text[]`;
  const hasAll = (key: string, values: string[]) => sql`(${type(key)} = 'array' and ${json(key)} ?& ${array(values)})`;
  return {
    empty: (key) => sql`(${json(key)} is null or ${json(key)} in ('null'::jsonb, '""'::jsonb, '[]'::jsonb))`,
    // Under the "C" collation lower() folds exactly A–Z, whatever the database locale.
    textContains: (key, folded) => sql`(${type(key)} = 'string' and strpos(lower(${text(key)} collate "C"), ${folded}::text) > 0)`,
    oneOf: (key, values) => sql`(${type(key)} = 'string' and ${text(key)} in (${sql.join(values.map((v) => sql`${v}::text`))}))`,
    // The CASE guards the cast: PostgreSQL does not promise to evaluate the type test first.
    numCompare: (key, cmp, n) =>
      sql`((case when ${type(key)} = 'number' then (${text(key)})::float8 end) ${COMPARISONS[cmp]} ${n}::float8)`,
    isTrue: (key) => sql`(${json(key)} = 'true'::jsonb)`,
    // ?| / ?& / <@ look at top-level string elements only, like the in-memory evaluator.
    hasAny: (key, values) => sql`(${type(key)} = 'array' and ${json(key)} ?| ${array(values)})`,
    hasAll,
    hasExactly: (key, values) => sql`(${hasAll(key, values)} and ${json(key)} <@ to_jsonb(${array(values)}))`,
    dateValid: (key) => sql`(${type(key)} = 'string' and ${text(key)} ~ ${PG_DAY_REGEX}::text)`,
    dateKey: (key, unit) =>
      unit === 'day'
        ? sql`(substr(${text(key)}, 1, 10) collate "C")`
        : sql`((case when ${text(key)} ~ ${PG_MINUTE_REGEX}::text then substr(${text(key)}, 1, 16) else substr(${text(key)}, 1, 10) || ' 00:00' end) collate "C")`,
  };
}

const ROW_COLUMNS = { creator: 'creator', last_modifier: 'last_modifier', ctime: 'ctime', mtime: 'mtime' } as const;

export function filterToSql(filter: CompiledFilter, ctx: FilterContext, dialect: Dialect, alias?: string): Expression<SqlBool> {
  const condition = resolveCondition(filter.root, ctx);
  if (condition === null) return sql<SqlBool>`(1 = 1)`;
  return conditionToSql(condition, dialect, alias);
}

/** Compiles an already resolved condition (exported for tests). */
export function conditionToSql(condition: Condition, dialect: Dialect, alias?: string): Expression<SqlBool> {
  const column = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  const leaves = dialect === 'postgres' ? postgresCompiler(column('data')) : sqliteCompiler(column('data'));
  const param = (value: string | number) => (dialect === 'postgres' && typeof value === 'string' ? sql`${value}::text` : sql`${value}`);

  const rowColumn = (src: Exclude<Source, { kind: 'cell' }>) => column(ROW_COLUMNS[src.field]);

  const leaf = (c: Exclude<Condition, { op: 'and' | 'or' | 'not' | 'const' }>): Fragment => {
    switch (c.op) {
      case 'empty':
        if (c.src.kind === 'cell') return leaves.empty(c.src.key);
        if (c.src.kind === 'time') return sql`(${rowColumn(c.src)} is null)`;
        return sql`(${rowColumn(c.src)} is null or ${rowColumn(c.src)} = '')`;
      case 'textContains':
        return leaves.textContains(c.key, c.folded);
      case 'oneOf':
        if (c.src.kind === 'cell') return leaves.oneOf(c.src.key, c.values);
        return sql`(${rowColumn(c.src)} in (${sql.join(c.values.map(param))}))`;
      case 'numCompare':
        return leaves.numCompare(c.key, c.cmp, c.value);
      case 'isTrue':
        return leaves.isTrue(c.key);
      case 'hasAny':
        return leaves.hasAny(c.key, c.values);
      case 'hasAll':
        return leaves.hasAll(c.key, c.values);
      case 'hasExactly':
        return leaves.hasExactly(c.key, c.values);
      case 'dateValid':
        return leaves.dateValid(c.key);
      case 'dateKeyRange': {
        const key = leaves.dateKey(c.key, c.unit);
        const parts = [leaves.dateValid(c.key)];
        if (c.from !== null) parts.push(sql`${key} >= ${param(c.from)}`);
        if (c.to !== null) parts.push(sql`${key} <= ${param(c.to)}`);
        return sql`(${sql.join(parts, sql` and `)})`;
      }
      case 'timeRange': {
        const time = column(ROW_COLUMNS[c.field]);
        const parts: Fragment[] = [sql`${time} is not null`];
        if (c.from !== null) parts.push(sql`${time} >= ${c.from}`);
        if (c.until !== null) parts.push(sql`${time} < ${c.until}`);
        return sql`(${sql.join(parts, sql` and `)})`;
      }
    }
  };

  const walk = (c: Condition): Fragment => {
    switch (c.op) {
      case 'and':
      case 'or':
        return sql`(${sql.join(c.items.map(walk), c.op === 'and' ? sql` and ` : sql` or `)})`;
      case 'not':
        return sql`(not ${walk(c.item)})`;
      case 'const':
        return c.value ? sql`(1 = 1)` : sql`(1 = 0)`;
      default:
        return sql`coalesce(${leaf(c)}, false)`;
    }
  };
  return walk(condition) as RawBuilder<SqlBool>;
}
