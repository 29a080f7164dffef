/**
 * Compiles a filter to a WHERE expression over `base_rows` (columns `data`, `ctime`, `mtime`, `creator`,
 * `last_modifier`) for SQLite (`data` is JSON text) and PostgreSQL (`data` is JSONB). Every value is a
 * bound parameter, except plain column keys, written as literals so the expressions match the row
 * indexes built on them (cell-sql.ts); only fixed SQL text and those keys are written inline.
 * The result is a WHERE condition: it holds for exactly the rows `evaluate()` accepts. Each leaf under a
 * NOT is wrapped in coalesce(…, false) so NULLs never leak into NOT; elsewhere a leaf may be NULL where
 * `evaluate()` says false, which a WHERE treats alike (do not negate or select the result as a value).
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { dayUpperBound, indexedValue, postgresJson, postgresNumber, postgresText, postgresTextC, sqlitePathOf, sqliteType, sqliteValue } from './cell-sql.js';
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
  /** The cell's text as its index orders it (index ranges beside the exact date test). */
  indexedText(key: string): Fragment;
}

const list = (values: string[]) => sql.join(values.map((v) => sql`${v}`));

const SQLITE_DAY_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]';
const SQLITE_MINUTE_GLOB = `${SQLITE_DAY_GLOB} [0-9][0-9]:[0-9][0-9]`;

/**
 * Whether `term` appears verbatim in the JSON text of any string containing it: printable ASCII other than
 * `"` and a backslash, which JSON.stringify (every row's text is written by it) and SQLite's JSON functions never
 * escape. A string cell containing such a term has it in its row's text, so looking for it there first
 * only passes over rows the exact test would refuse.
 */
export function rawInJson(term: string): boolean {
  return /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/.test(term);
}

function sqliteCompiler(data: Fragment): LeafCompiler {
  const path = sqlitePathOf;
  const type = (key: string) => sqliteType(data, key);
  const value = (key: string) => sqliteValue(data, key);
  const elements = (key: string) => sql`json_each(${data}, ${path(key)})`;
  const hasAll = (key: string, values: string[]) =>
    sql`(${type(key)} = 'array' and (select count(distinct je.value) from ${elements(key)} as je where je.type = 'text' and je.value in (${list(values)})) = ${values.length})`;
  return {
    empty: (key) =>
      sql`(coalesce(${type(key)}, 'null') = 'null' or (${type(key)} = 'text' and ${value(key)} = '') or (${type(key)} = 'array' and json_array_length(${data}, ${path(key)}) = 0))`,
    // SQLite's lower() folds ASCII letters only, the same rule as asciiLower(). A term JSON writes as is
    // is first looked for in the row's whole text (`rawInJson`): a row without it anywhere is passed over
    // without parsing its JSON, 1.7× faster through a table the term is rare in.
    textContains: (key, folded) => {
      const exact = sql`(${type(key)} = 'text' and instr(lower(${value(key)}), ${folded}) > 0)`;
      return rawInJson(folded) ? sql`(instr(lower(${data}), ${folded}) > 0 and ${exact})` : exact;
    },
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
    indexedText: value,
  };
}

const PG_DAY_REGEX = '^[0123456789]{4}-[0123456789]{2}-[0123456789]{2}';
const PG_MINUTE_REGEX = `${PG_DAY_REGEX} [0123456789]{2}:[0123456789]{2}`;

function postgresCompiler(data: Fragment): LeafCompiler {
  const json = (key: string) => postgresJson(data, key);
  const text = (key: string) => postgresText(data, key);
  const type = (key: string) => sql`jsonb_typeof(${json(key)})`;
  const array = (values: string[]) => sql`array[${sql.join(values.map((v) => sql`${v}::text`))}]::text[]`;
  const hasAll = (key: string, values: string[]) => sql`(${type(key)} = 'array' and ${json(key)} ?& ${array(values)})`;
  return {
    empty: (key) => sql`(${json(key)} is null or ${json(key)} in ('null'::jsonb, '""'::jsonb, '[]'::jsonb))`,
    // Under the "C" collation lower() folds exactly A–Z, whatever the database locale.
    textContains: (key, folded) => sql`(${type(key)} = 'string' and strpos(lower(${text(key)} collate "C"), ${folded}::text) > 0)`,
    // Equality is the same under every deterministic collation; "C" is the one the text index has.
    oneOf: (key, values) => sql`(${type(key)} = 'string' and ${postgresTextC(data, key)} in (${sql.join(values.map((v) => sql`${v}::text`))}))`,
    // The CASE guards the cast: PostgreSQL does not promise to evaluate the type test first.
    numCompare: (key, cmp, n) => sql`(${postgresNumber(data, key)} ${COMPARISONS[cmp]} ${n}::float8)`,
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
    indexedText: (key) => postgresTextC(data, key),
  };
}

const ROW_COLUMNS = { creator: 'creator', last_modifier: 'last_modifier', ctime: 'ctime', mtime: 'mtime' } as const;

export function filterToSql(filter: CompiledFilter, ctx: FilterContext, dialect: Dialect, alias?: string): Expression<SqlBool> {
  const condition = resolveCondition(filter.root, ctx);
  if (condition === null) return sql<SqlBool>`(1 = 1)`;
  return conditionToSql(condition, dialect, alias);
}

/**
 * Per column key, the filter's top-level AND terms an index on that cell answers (number comparisons,
 * option and text equality, date ranges) as one WHERE condition on the indexed expression only: every
 * row the filter accepts satisfies it. Used to pick and probe a row index (rows/row-indexes.ts).
 */
export function indexableTerms(filter: CompiledFilter, ctx: FilterContext, dialect: Dialect): Array<{ key: string; where: Expression<SqlBool> }> {
  const condition = resolveCondition(filter.root, ctx);
  if (condition === null) return [];
  const top = condition.op === 'and' ? condition.items : [condition];
  const data = sql.ref('base_rows.data');
  const param = (value: string) => (dialect === 'postgres' ? sql`${value}::text` : sql`${value}`);
  // Per column key, the ranges on the indexed expression alone (implied by the exact terms, so they
  // hold for every accepted row): what the index itself answers, without reading a row.
  const ranges = new Map<string, Fragment[]>();
  const add = (key: string, range: Fragment) => ranges.set(key, [...(ranges.get(key) ?? []), range]);
  for (const c of top) {
    if (c.op === 'numCompare') add(c.key, sql`${indexedValue(dialect, data, c.key, 'number')} ${COMPARISONS[c.cmp]} ${dialect === 'postgres' ? sql`${c.value}::float8` : sql`${c.value}`}`);
    else if (c.op === 'oneOf' && c.src.kind === 'cell' && c.values.length > 0) add(c.src.key, sql`${indexedValue(dialect, data, c.src.key, 'text')} in (${sql.join(c.values.map(param))})`);
    else if (c.op === 'dateKeyRange' && (c.from !== null || c.to !== null)) {
      const cell = indexedValue(dialect, data, c.key, 'text');
      if (c.from !== null) add(c.key, sql`${cell} >= ${param(c.from.slice(0, 10))}`);
      if (c.to !== null) add(c.key, sql`${cell} < ${param(dayUpperBound(c.to.slice(0, 10)))}`);
    }
  }
  return [...ranges].map(([key, parts]) => ({ key, where: sql<SqlBool>`(${sql.join(parts, sql` and `)})` }));
}

/** Shortest term a trigram index narrows by (a shorter one holds no trigram). */
export const SEARCH_MIN_TERM = 3;

/**
 * The `contains` terms among the filter's top-level AND terms that a trigram index of the rows' whole
 * text can narrow by (rows/search-index.ts), folded as the exact test folds them: at least
 * `SEARCH_MIN_TERM` characters JSON writes as is (`rawInJson`), so every row whose cell contains the term
 * holds it, in some case, in its text. Every row the filter accepts contains each of them.
 */
export function searchTerms(filter: CompiledFilter, ctx: FilterContext): string[] {
  const condition = resolveCondition(filter.root, ctx);
  if (condition === null) return [];
  const top = condition.op === 'and' ? condition.items : [condition];
  const terms = top.flatMap((c) => (c.op === 'textContains' && c.folded.length >= SEARCH_MIN_TERM && rawInJson(c.folded) ? [c.folded] : []));
  return [...new Set(terms)];
}

/** Compiles an already resolved condition (exported for tests); a WHERE condition, as `filterToSql`. */
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
        // The same bounds on the whole text, implied by the exact ones above (a valid date's key starts
        // with its first 10 characters): redundant for the answer, they let an index on the cell narrow
        // the rows before the exact test.
        const cell = leaves.indexedText(c.key);
        if (c.from !== null) parts.push(sql`${cell} >= ${param(c.from.slice(0, 10))}`);
        if (c.to !== null) parts.push(sql`${cell} < ${param(dayUpperBound(c.to.slice(0, 10)))}`);
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

  // `positive`: not under a NOT. There a NULL leaf and a false one lead to the same WHERE answer
  // (AND/OR are monotone, and WHERE keeps only true), so the leaf is written bare: a plain comparison
  // the planner can answer from an index, where coalesce(…) would hide it.
  const walk = (c: Condition, positive: boolean): Fragment => {
    switch (c.op) {
      case 'and':
      case 'or':
        return sql`(${sql.join(c.items.map((item) => walk(item, positive)), c.op === 'and' ? sql` and ` : sql` or `)})`;
      case 'not':
        return sql`(not ${walk(c.item, false)})`;
      case 'const':
        return c.value ? sql`(1 = 1)` : sql`(1 = 0)`;
      default:
        return positive ? leaf(c) : sql`coalesce(${leaf(c)}, false)`;
    }
  };
  return walk(condition, true) as RawBuilder<SqlBool>;
}
