import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { prng } from './equivalence.fixture.js';
import { familyOf, predicatesOf } from './predicates.js';
import { MAX_DEPTH, MAX_ITEMS, filterToSql, matchesRow, parseFilters, usedColumnKeys, usesCurrentUser, type FilterColumn, type StoredRow } from './index.js';

const COLUMNS: FilterColumn[] = [
  { key: '0000', name: 'Name', type: 'text', data: null },
  { key: 'Nb00', name: 'Amount', type: 'number', data: null },
  { key: 'Du00', name: 'Spent', type: 'duration', data: { duration_format: 'h:mm' } },
  { key: 'Cb00', name: 'Done', type: 'checkbox', data: null },
  { key: 'Dt00', name: 'Due', type: 'date', data: null },
  { key: 'Ct00', name: 'Created', type: 'ctime', data: null },
  { key: 'Ss00', name: 'Status', type: 'single-select', data: { options: [{ id: 'o001', name: 'Open' }] } },
  { key: 'Ms00', name: 'Tags', type: 'multiple-select', data: { options: 'not a list' } },
  { key: 'Co00', name: 'People', type: 'collaborator', data: null },
  { key: 'Cr00', name: 'Creator', type: 'creator', data: null },
  { key: 'Fi00', name: 'Files', type: 'file', data: null },
  { key: 'Lk00', name: 'Link', type: 'link', data: { table_id: '0000', other_table_id: '0001' } },
  { key: 'Fo00', name: 'Formula', type: 'formula', data: { result_type: 'number' } },
  { key: 'Bad"', name: 'Quoted', type: 'text', data: null },
  { key: 'Nb00', name: 'Duplicate key', type: 'text', data: null },
];

const item = (column_name: string, filter_predicate: unknown, filter_term?: unknown, filter_term_modifier?: unknown) => ({
  column_name,
  filter_predicate,
  filter_term,
  filter_term_modifier,
});

function errorOf(spec: unknown): string {
  const result = parseFilters(spec, COLUMNS);
  if (result.ok) throw new Error(`expected an error for ${JSON.stringify(spec)}`);
  return result.error;
}

function parsed(spec: unknown) {
  const result = parseFilters(spec, COLUMNS);
  if (!result.ok) throw new Error(result.error);
  return result.filter;
}

describe('parseFilters errors', () => {
  it('names a missing column by the reference given', () => {
    expect(errorOf({ filters: [item('Nope', 'is', 'x')] })).toBe('column Nope not found');
    expect(errorOf({ filters: [{ column_key: 'zzzz', filter_predicate: 'is' }] })).toBe('column zzzz not found');
    expect(errorOf({ filters: [{ filter_predicate: 'is', filter_term: 'x' }] })).toMatch(/needs column_key or column_name/);
    expect(errorOf({ filters: [{ column_name: '', column_key: 5, filter_predicate: 'is' }] })).toMatch(/needs column_key or column_name/);
  });

  it('gives the contract message for an unsupported predicate', () => {
    expect(errorOf({ filters: [item('Name', 'equal', 1)] })).toBe(
      "Filter on Name invalid: text type column 'Name' does not support 'equal', available predicates are " +
        "['contains', 'does_not_contain', 'is', 'is_not', 'is_empty', 'is_not_empty', 'is_current_user_ID']",
    );
    expect(errorOf({ filters: [item('Done', 'is_empty')] })).toBe(
      "Filter on Done invalid: checkbox type column 'Done' does not support 'is_empty', available predicates are ['is']",
    );
    expect(errorOf({ filters: [item('Created', 'contains', 'x')] })).toMatch(/ctime type column 'Created' does not support 'contains'/);
    expect(errorOf({ filters: [item('Creator', 'is_empty')] })).toMatch(
      /available predicates are \['contains', 'does_not_contain', 'is', 'is_not', 'include_me'\]$/,
    );
    expect(errorOf({ filters: [item('Amount', 'IS_EMPTY')] })).toMatch(/does not support 'IS_EMPTY'/);
    expect(errorOf({ filters: [item('Amount', undefined)] })).toMatch(/does not support ''/);
    expect(errorOf({ filters: [item('Amount', 7)] })).toMatch(/does not support '7'/);
  });

  it('refuses link columns, listing no predicates; formulas take the predicates of their result type', () => {
    expect(errorOf({ filters: [item('Link', 'is_empty')] })).toBe(
      "Filter on Link invalid: link type column 'Link' does not support 'is_empty', available predicates are []",
    );
    expect(parseFilters({ filters: [item('Formula', 'equal', 1)] }, COLUMNS).ok).toBe(true);
    expect(errorOf({ filters: [item('Formula', 'contains', 'a')] })).toMatch(/formula type column 'Formula' does not support 'contains', available predicates are \['equal'/);
  });

  it('refuses a bad conjunction at any level', () => {
    expect(errorOf({ filters: [], filter_conjunction: 'Xor' })).toBe('filter_conjunction invalid');
    expect(errorOf({ filters: [], filter_conjunction: 1 })).toBe('filter_conjunction invalid');
    expect(errorOf({ filters: [], filter_conjunction: ['And'] })).toBe('filter_conjunction invalid');
    expect(errorOf({ filters: [{ filters: [], filter_conjunction: 'both' }] })).toBe('filter_conjunction invalid');
  });

  it('refuses malformed documents and items', () => {
    for (const spec of [null, 5, 'x', [], true]) expect(errorOf(spec)).toBe('filters invalid');
    expect(errorOf({ filters: 'Name is x' })).toMatch(/filters must be a list/);
    expect(errorOf({ filters: { column_name: 'Name' } })).toMatch(/filters must be a list/);
    for (const bad of [null, 1, 'x', [item('Name', 'is', 'x')]]) expect(errorOf({ filters: [bad] })).toMatch(/each filter must be an object/);
  });

  it('refuses terms of the wrong kind', () => {
    expect(errorOf({ filters: [item('Name', 'contains', { a: 1 })] })).toBe('Filter on Name invalid: filter_term must be a string');
    expect(errorOf({ filters: [item('Name', 'is', ['x'])] })).toMatch(/must be a string/);
    expect(errorOf({ filters: [item('Amount', 'equal', 'ten')] })).toBe('Filter on Amount invalid: filter_term must be a number');
    expect(errorOf({ filters: [item('Amount', 'less', true)] })).toMatch(/must be a number/);
    expect(errorOf({ filters: [item('Amount', 'less', '1:30')] })).toMatch(/must be a number/);
    expect(errorOf({ filters: [item('Spent', 'less', '1h')] })).toMatch(/a number or a duration/);
    expect(errorOf({ filters: [item('Done', 'is', 'maybe')] })).toMatch(/must be true or false/);
    expect(errorOf({ filters: [item('Done', 'is', [true])] })).toMatch(/must be true or false/);
    expect(errorOf({ filters: [item('Status', 'is', ['o001'])] })).toMatch(/an option id or name/);
    expect(errorOf({ filters: [item('Status', 'is_any_of', [1])] })).toMatch(/a string or a list of strings/);
    expect(errorOf({ filters: [item('Tags', 'has_any_of', [null, {}])] })).toMatch(/a string or a list of strings/);
    expect(errorOf({ filters: [item('People', 'has_any_of', new Array(1001).fill('u'))] })).toMatch(/at most 1000 values/);
    expect(errorOf({ filters: [item('Creator', 'contains', 5)] })).toMatch(/a string or a list of strings/);
  });

  it('refuses bad date modifiers and terms', () => {
    expect(errorOf({ filters: [item('Due', 'is', null, 'someday')] })).toBe(
      "Filter on Due invalid: filter_term_modifier 'someday' is not supported by 'is'",
    );
    expect(errorOf({ filters: [item('Due', 'is', null, 'this_week')] })).toMatch(/'this_week' is not supported by 'is'/);
    expect(errorOf({ filters: [item('Due', 'is_within', null, 'today')] })).toMatch(/'today' is not supported by 'is_within'/);
    expect(errorOf({ filters: [item('Due', 'is', null, 3)] })).toMatch(/'3' is not supported/);
    expect(errorOf({ filters: [item('Due', 'is', 'abc', 'number_of_days_ago')] })).toMatch(/whole number of days/);
    expect(errorOf({ filters: [item('Due', 'is', 1.5, 'number_of_days_ago')] })).toMatch(/whole number of days/);
    expect(errorOf({ filters: [item('Due', 'is_within', 100_001, 'the_next_numbers_of_days')] })).toMatch(/at most 100000/);
    expect(errorOf({ filters: [item('Due', 'is', '2023-02-29', 'exact_date')] })).toBe('Filter on Due invalid: filter_term must be a date (YYYY-MM-DD)');
    expect(errorOf({ filters: [item('Due', 'is', 'tomorrow', 'exact_date')] })).toMatch(/a date \(YYYY-MM-DD\)/);
    expect(errorOf({ filters: [item('Due', 'is', 20240101, 'exact_date')] })).toMatch(/a date \(YYYY-MM-DD\)/);
    expect(errorOf({ filters: [item('Due', 'is', '2024-01-01 24:00', 'exact_date_time')] })).toMatch(/a date and time/);
    expect(errorOf({ filters: [item('Due', 'is', '2024-01-01 10:00 junk', 'exact_date_time')] })).toMatch(/a date and time/);
  });

  it('caps nesting depth and item count', () => {
    const nest = (levels: number): unknown => {
      let group: unknown = { filters: [item('Name', 'is', 'x')] };
      for (let i = 0; i < levels; i += 1) group = { filters: [group] };
      return group;
    };
    expect(parseFilters(nest(MAX_DEPTH), COLUMNS).ok).toBe(true);
    expect(errorOf(nest(MAX_DEPTH + 1))).toMatch(/nested deeper than 10 levels/);
    expect(errorOf(nest(100_000))).toMatch(/nested deeper/);
    const many = (n: number) => ({ filters: Array.from({ length: n }, () => item('Name', 'is', 'x')) });
    expect(parseFilters(many(MAX_ITEMS), COLUMNS).ok).toBe(true);
    expect(errorOf(many(MAX_ITEMS + 1))).toMatch(/more than 500 filters/);
  });

  it('refuses a column whose key would change the JSON path', () => {
    expect(errorOf({ filters: [item('Quoted', 'is', 'x')] })).toBe('Filter on Quoted invalid: unsupported column key');
  });
});

describe('parseFilters results', () => {
  it('drops incomplete items and the groups they empty', () => {
    const filter = parsed({
      filters: [
        item('Name', 'contains', ''),
        item('Amount', 'equal', null),
        item('Due', 'is', '2024-01-01'), // no modifier
        item('Due', 'is', '', 'exact_date'),
        item('Due', 'is', null, 'number_of_days_ago'),
        item('Status', 'is_any_of', []),
        item('Tags', 'has_any_of', ['', null]),
        item('Creator', 'contains', []),
        { filters: [item('Name', 'is', null)], filter_conjunction: 'Or' },
      ],
    });
    expect(filter.root).toBeNull();
    expect(usedColumnKeys(filter)).toEqual(['0000', 'Nb00', 'Dt00', 'Ss00', 'Ms00', 'Cr00']);
  });

  it('treats an absent or empty filter list and conjunction as match-all / And', () => {
    expect(parsed({}).root).toBeNull();
    expect(parsed({ filters: null, filter_conjunction: null }).root).toBeNull();
    expect(parsed({ filters: [item('Name', 'is', 'a'), item('Name', 'is', 'b')], filter_conjunction: '' }).root).toMatchObject({ op: 'and' });
    expect(parsed({ filters: [item('Name', 'is', 'a'), item('Name', 'is', 'b')], filter_conjunction: 'OR' }).root).toMatchObject({ op: 'or' });
  });

  it('prefers column_key, falling back to column_name', () => {
    const byKey = parsed({ filters: [{ column_key: 'Nb00', column_name: 'Name', filter_predicate: 'equal', filter_term: 1 }] });
    expect(byKey.root).toMatchObject({ op: 'numCompare', key: 'Nb00' });
    const fallback = parsed({ filters: [{ column_key: 'gone', column_name: 'Name', filter_predicate: 'is', filter_term: 'x' }] });
    expect(fallback.root).toMatchObject({ op: 'oneOf', values: ['x'] });
  });

  it('maps select option ids to names and keeps unknown terms as names', () => {
    expect(parsed({ filters: [item('Status', 'is_any_of', ['o001', 'Other', 'o001'])] }).root).toMatchObject({ values: ['Open', 'Other'] });
    expect(parsed({ filters: [item('Tags', 'has_all_of', 'x')] }).root).toMatchObject({ op: 'hasAll', values: ['x'] });
  });

  it('parses duration terms to seconds', () => {
    expect(parsed({ filters: [item('Spent', 'equal', '1:30')] }).root).toMatchObject({ value: 5400 });
    expect(parsed({ filters: [item('Spent', 'equal', '-0:01:05')] }).root).toMatchObject({ value: -65 });
    expect(parsed({ filters: [item('Spent', 'equal', ' 90 ')] }).root).toMatchObject({ value: 90 });
    expect(parsed({ filters: [item('Amount', 'equal', '1e3')] }).root).toMatchObject({ value: 1000 });
  });

  it('reports whether the current user is involved', () => {
    expect(usesCurrentUser(parsed({ filters: [item('People', 'include_me')] }))).toBe(true);
    expect(usesCurrentUser(parsed({ filters: [{ filters: [item('Name', 'is_current_user_ID')] }] }))).toBe(true);
    expect(usesCurrentUser(parsed({ filters: [item('Creator', 'include_me')] }))).toBe(true);
    expect(usesCurrentUser(parsed({ filters: [item('People', 'has_any_of', ['u'])] }))).toBe(false);
  });
});

// ---- fuzzing: arbitrary JSON never throws, and whatever parses can be evaluated and compiled ----

const VOCABULARY = [
  'filters', 'filter_conjunction', 'column_name', 'column_key', 'filter_predicate', 'filter_term', 'filter_term_modifier',
  'Name', 'Amount', 'Spent', 'Done', 'Due', 'Created', 'Status', 'Tags', 'People', 'Creator', 'Files', 'Link', '0000', 'Nb00',
  'And', 'Or', 'is', 'is_not', 'contains', 'equal', 'less', 'is_empty', 'is_within', 'has_any_of', 'is_exactly', 'include_me',
  'is_any_of', 'is_on_or_after', 'today', 'exact_date', 'exact_date_time', 'number_of_days_ago', 'the_next_numbers_of_days',
  'this_week', '2024-02-29', '2024-03-06 10:00', '1:30', 'o001', '', '__proto__', 'constructor',
];

function junk(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const scalars = [null, true, false, 0, -1, 1.5, 1e308, NaN, '', 'x'];
    return rand() < 0.6 ? VOCABULARY[Math.floor(rand() * VOCABULARY.length)] : scalars[Math.floor(rand() * scalars.length)];
  }
  if (r < 0.55) return Array.from({ length: Math.floor(rand() * 4) }, () => junk(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 6); i > 0; i -= 1) o[VOCABULARY[Math.floor(rand() * 7)] ?? 'x'] = junk(rand, depth + 1);
  if (rand() < 0.5) o.filters = Array.from({ length: Math.floor(rand() * 4) }, () => junk(rand, depth + 1));
  return o;
}

const PREDICATE_POOL = [
  'contains', 'does_not_contain', 'is', 'is_not', 'is_empty', 'is_not_empty', 'is_current_user_ID', 'equal', 'not_equal',
  'greater', 'greater_or_equal', 'less', 'less_or_equal', 'is_after', 'is_before', 'is_on_or_before', 'is_on_or_after',
  'is_within', 'is_any_of', 'is_none_of', 'has_any_of', 'has_all_of', 'has_none_of', 'is_exactly', 'include_me',
];
const MODIFIER_POOL = [
  undefined, 'today', 'tomorrow', 'yesterday', 'one_week_ago', 'one_week_from_now', 'one_month_ago', 'one_month_from_now',
  'number_of_days_ago', 'number_of_days_from_now', 'exact_date', 'exact_date_time', 'the_past_week', 'this_month',
  'the_next_year', 'the_next_numbers_of_days', 'the_past_numbers_of_days',
];
const TERM_POOL = [undefined, null, '', 'x', 'Open', 'o001', 3, '3', -2, 1.5, '1:30', true, false, ['x'], ['o001', 'y'], [], '2024-02-29', '2024-03-06 10:00'];
const COLUMN_POOL = ['Name', 'Amount', 'Spent', 'Done', 'Due', 'Created', 'Status', 'Tags', 'People', 'Creator', 'Files'];

/** A plausible filter item or group: most of these parse, so evaluation and compilation get exercised. */
function plausible(rand: () => number, depth: number): unknown {
  const pick = <T>(pool: readonly T[]) => pool[Math.floor(rand() * pool.length)];
  if (depth < 3 && rand() < 0.25) {
    return { filter_conjunction: pick(['And', 'Or', 'or']), filters: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => plausible(rand, depth + 1)) };
  }
  const column = COLUMNS.find((c) => c.name === pick(COLUMN_POOL)) ?? COLUMNS[0]!;
  const predicate = rand() < 0.8 ? pick(predicatesOf(familyOf(column.type, column.data))) : pick(PREDICATE_POOL);
  return { column_name: column.name, filter_predicate: predicate, filter_term: pick(TERM_POOL), filter_term_modifier: pick(MODIFIER_POOL) };
}

type CompileOnly = Kysely<{ base_rows: { row_id: string } }>;
const compilers: Record<'sqlite' | 'postgres', CompileOnly> = {
  sqlite: new Kysely({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
};

const SAMPLE_ROWS: StoredRow[] = [
  { _id: 'a', _ctime: 0, _mtime: 0, _creator: 'u', _last_modifier: 'u', data: {} },
  {
    _id: 'b',
    _ctime: Date.UTC(2024, 2, 6),
    _mtime: Date.UTC(2024, 2, 6),
    _creator: '',
    _last_modifier: 'app',
    data: { '0000': 'x', Nb00: 1.5, Dt00: '2024-02-29', Ss00: 'Open', Ms00: ['x'], Co00: ['u'], Cb00: true, Fi00: [{}] },
  },
  { _id: 'c', _ctime: 1, _mtime: 1, _creator: 'u', _last_modifier: 'u', data: { '0000': ['x'], Nb00: 'x', Dt00: 5, Ms00: 'x', Co00: {} } },
];

describe('parseFilters on junk', () => {
  it('never throws, and what it accepts evaluates and compiles on both dialects', () => {
    const rand = prng(20240306);
    let accepted = 0;
    for (let i = 0; i < 4000; i += 1) {
      const spec =
        i % 3 === 0
          ? junk(rand, 0)
          : i % 3 === 1
            ? { filters: [junk(rand, 1), junk(rand, 1)], filter_conjunction: junk(rand, 5) }
            : { filters: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => plausible(rand, 0)), filter_conjunction: 'And' };
      const result = parseFilters(spec, COLUMNS);
      expect(typeof result.ok).toBe('boolean');
      if (!result.ok) {
        expect(typeof result.error).toBe('string');
        continue;
      }
      if (result.filter.root) accepted += 1;
      const ctx = { now: Date.UTC(2024, 2, 6, 12), timeZone: i % 3 ? 'UTC' : 'Europe/Berlin', currentUser: i % 2 ? 'u' : undefined };
      for (const row of SAMPLE_ROWS) expect(typeof matchesRow(result.filter, row, ctx)).toBe('boolean');
      for (const dialect of ['sqlite', 'postgres'] as const) {
        const compiled = compilers[dialect].selectFrom('base_rows').select('row_id').where(filterToSql(result.filter, ctx, dialect)).compile();
        expect(compiled.sql).toMatch(/^select/);
      }
    }
    // The generator must reach the accepting paths, or this test proves little.
    expect(accepted).toBeGreaterThan(300);
  });

  it('survives hostile shapes', () => {
    const cyclic: Record<string, unknown> = { filters: [] };
    (cyclic.filters as unknown[]).push(cyclic);
    expect(parseFilters(cyclic, COLUMNS)).toMatchObject({ ok: false });
    expect(parseFilters(JSON.parse('{"filters":[{"__proto__":{"column_name":"Name"},"filter_predicate":"is"}]}'), COLUMNS)).toMatchObject({ ok: false });
    expect(parseFilters({ filters: [item('constructor', 'is', 'x')] }, COLUMNS)).toEqual({ ok: false, error: 'column constructor not found' });
    expect(parseFilters({ filters: [item('Name', 'is', 'x')] }, null as unknown as FilterColumn[])).toEqual({ ok: false, error: 'column Name not found' });
  });
});
