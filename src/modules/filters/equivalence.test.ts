/**
 * One table of filter cases run through both paths — `matchesRow` in memory and `filterToSql` against a
 * scratch `base_rows` table (SQLite TEXT / PostgreSQL JSONB) — on the same rows, under several contexts.
 * Every case must give identical row sets; key cases are also checked against a hand-written answer.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../../db/index.js';
import { DIALECTS, createTestDatabase } from '../../../test/helpers/db.js';
import { COLUMNS, CONTEXTS, NOW, ROWS, U1, U2, prng, randomFilter } from './equivalence.fixture.js';
import { filterToSql, indexableKey, indexedValue, matchesRow, parseFilters } from './index.js';

interface ScratchDb {
  base_rows: {
    id: number;
    base_id: number;
    table_id: string;
    row_id: string;
    data: string;
    ctime: number;
    mtime: number;
    creator: string | null;
    last_modifier: string | null;
  };
  other_rows: { row_id: string; data: string };
}

type Case = { name: string; filters: unknown[]; conjunction?: string; expect?: string[] };
const f = (column_name: string, filter_predicate: string, filter_term?: unknown, filter_term_modifier?: string) => ({
  column_name,
  filter_predicate,
  filter_term,
  filter_term_modifier,
});
const ids = (...n: number[]) => n.map((i) => `r${String(i).padStart(2, '0')}`);
const ALL = ROWS.map((r) => r._id);
const except = (...n: number[]) => ALL.filter((id) => !ids(...n).includes(id));

const CASES: Case[] = [
  // formula and link-formula columns: the families of their result types
  { name: 'number formula greater', filters: [f('Total', 'greater', 19)], expect: ids(1, 2) },
  { name: 'number formula equal zero', filters: [f('Total', 'equal', 0)], expect: ids(8) },
  { name: 'text formula contains', filters: [f('Label', 'contains', 'soup')], expect: ids(2) },
  { name: 'text formula is_empty', filters: [f('Label', 'is_empty')], expect: except(1, 2, 3) },
  { name: 'bool formula is true', filters: [f('Ok', 'is', true)], expect: ids(1, 2) },
  { name: 'date formula is_before an exact date', filters: [f('Deadline', 'is_before', '2024-03-06', 'exact_date')], expect: ids(3, 8) },
  { name: 'date formula is today', filters: [f('Deadline', 'is', '', 'today')] },
  { name: 'array link formula has_any_of', filters: [f('Lookup', 'has_any_of', ['green', 'blue'])], expect: ids(1, 2) },
  // text family
  { name: 'text contains, ASCII case-insensitive, not Unicode', filters: [f('Name', 'contains', 'ALPHA')], expect: ids(1, 2, 15) },
  { name: 'text contains does not fold non-ASCII letters', filters: [f('Name', 'contains', 'älpha')], expect: [] },
  { name: 'text contains non-ASCII with matching case', filters: [f('Name', 'contains', 'Ä')], expect: ids(3) },
  { name: 'text contains special characters literally', filters: [f('Name', 'contains', '%_')], expect: ids(10) },
  { name: 'text contains a quote and backslash', filters: [f('Name', 'contains', '"quote\\')], expect: ids(12) },
  { name: 'text contains emoji', filters: [f('Name', 'contains', '😀')], expect: ids(13) },
  { name: 'text does_not_contain keeps empty and non-text cells', filters: [f('Name', 'does_not_contain', 'a')], expect: except(1, 2, 3, 7, 8, 10, 11, 14, 15) },
  { name: 'text is exact and case-sensitive', filters: [f('Name', 'is', 'beta')], expect: ids(8) },
  { name: 'text is a number term', filters: [f('Name', 'is', 12)], expect: [] },
  { name: 'text is_not', filters: [f('Name', 'is_not', 'Alpha')], expect: except(1, 15) },
  { name: 'text is_empty', filters: [f('Name', 'is_empty')], expect: except(1, 2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15) },
  { name: 'text is_not_empty', filters: [f('Name', 'is_not_empty')] },
  { name: 'text blank term is ignored', filters: [f('Name', 'contains', '')], expect: ALL },
  { name: 'text is_current_user_ID', filters: [f('Name', 'is_current_user_ID')], expect: [] },
  { name: 'email contains', filters: [f('Mail', 'contains', 'example.COM')], expect: ids(28) },
  // SQLite looks for an ASCII term in the row's whole text first (to-sql.ts rawInJson): found in another cell or a key is not a match.
  { name: 'url contains a term only another cell holds', filters: [f('Link', 'contains', 'BOB@')], expect: [] },
  { name: 'text contains a term only a column key holds', filters: [f('Name', 'contains', 'em00')], expect: [] },
  { name: 'url does not contain a term only another cell holds', filters: [f('Link', 'does_not_contain', 'bob@')], expect: ALL },
  { name: 'url is', filters: [f('Link', 'is', 'https://example.com/A')], expect: ids(28) },
  { name: 'auto-number is', filters: [f('No', 'is', '0002')], expect: ids(29) },
  { name: 'odd column key', filters: [f('Odd key', 'is', 'odd')], expect: ids(28) },
  // number family
  { name: 'number greater 0 ignores numeric strings', filters: [f('Amount', 'greater', 0)], expect: ids(1, 2, 8, 9, 10, 11) },
  { name: 'number equal', filters: [f('Amount', 'equal', '10')], expect: ids(1, 10) },
  { name: 'number not_equal keeps empties', filters: [f('Amount', 'not_equal', 10)], expect: except(1, 10) },
  { name: 'number greater_or_equal', filters: [f('Amount', 'greater_or_equal', 10)], expect: ids(1, 2, 8, 10) },
  { name: 'number less', filters: [f('Amount', 'less', 0)], expect: ids(3, 12) },
  { name: 'number less_or_equal decimal', filters: [f('Amount', 'less_or_equal', 9.999)], expect: ids(3, 7, 9, 11, 12) },
  { name: 'number is_empty', filters: [f('Amount', 'is_empty')] },
  { name: 'number is_not_empty', filters: [f('Amount', 'is_not_empty')] },
  { name: 'duration term h:mm', filters: [f('Spent', 'equal', '1:30')], expect: ids(2) },
  { name: 'duration less', filters: [f('Spent', 'less', 3600)], expect: ids(28) },
  { name: 'rate greater_or_equal', filters: [f('Stars', 'greater_or_equal', 3)], expect: ids(1, 28) },
  // checkbox
  { name: 'checkbox is true (only boolean true)', filters: [f('Done', 'is', true)], expect: ids(1) },
  { name: 'checkbox is false (everything else)', filters: [f('Done', 'is', false)], expect: except(1) },
  // dates, "today" = 2024-03-06 in Auckland
  { name: 'date is today', filters: [f('Due', 'is', null, 'today')], expect: ids(1, 2, 23, 24, 30) },
  { name: 'date is yesterday', filters: [f('Due', 'is', null, 'yesterday')], expect: ids(3, 22) },
  { name: 'date is tomorrow', filters: [f('Due', 'is', null, 'tomorrow')], expect: ids(7) },
  { name: 'date is_not today excludes empty and invalid', filters: [f('Due', 'is_not', null, 'today')] },
  { name: 'date is_after today', filters: [f('Due', 'is_after', null, 'today')], expect: ids(7, 10, 12, 14, 15, 21, 27) },
  { name: 'date is_before today', filters: [f('Due', 'is_before', null, 'today')], expect: ids(3, 8, 11, 13, 16, 17, 18, 19, 20, 22) },
  { name: 'date is_on_or_before', filters: [f('Due', 'is_on_or_before', null, 'yesterday')] },
  { name: 'date is_on_or_after', filters: [f('Due', 'is_on_or_after', null, 'tomorrow')] },
  { name: 'date one_week_from_now', filters: [f('Due', 'is', null, 'one_week_from_now')], expect: ids(10) },
  { name: 'date one_week_ago', filters: [f('Due', 'is', null, 'one_week_ago')], expect: ids(8) },
  { name: 'date one_month_ago', filters: [f('Due', 'is', null, 'one_month_ago')], expect: ids(11) },
  { name: 'date one_month_from_now', filters: [f('Due', 'is', null, 'one_month_from_now')], expect: ids(12) },
  { name: 'date number_of_days_ago', filters: [f('Due', 'is_on_or_before', 7, 'number_of_days_ago')] },
  { name: 'date number_of_days_from_now', filters: [f('Due', 'is', '10', 'number_of_days_from_now')], expect: ids(27) },
  { name: 'date exact_date', filters: [f('Due', 'is', '2024-02-28', 'exact_date')], expect: ids(8) },
  { name: 'date exact_date_time', filters: [f('Due', 'is', '2024-03-06 01:30', 'exact_date_time')], expect: ids(24) },
  { name: 'date exact_date_time after', filters: [f('Due', 'is_after', '2024-03-06 00:00', 'exact_date_time')] },
  { name: 'date exact_date_time bare date is midnight', filters: [f('Due', 'is_on_or_before', '2024-03-06 00:00', 'exact_date_time')] },
  { name: 'date without modifier is ignored', filters: [f('Due', 'is', '2024-03-06')], expect: ALL },
  { name: 'date is_empty (empty or invalid)', filters: [f('Due', 'is_empty')], expect: ids(4, 5, 6, 9, 25, 26, 28, 29) },
  { name: 'date is_not_empty', filters: [f('Due', 'is_not_empty')] },
  { name: 'date within this_week (Mon–Sun)', filters: [f('Due', 'is_within', null, 'this_week')], expect: ids(1, 2, 3, 7, 13, 14, 22, 23, 24, 30) },
  { name: 'date within the_past_week', filters: [f('Due', 'is_within', null, 'the_past_week')], expect: ids(8, 16, 17) },
  { name: 'date within the_next_week', filters: [f('Due', 'is_within', null, 'the_next_week')], expect: ids(10, 15, 27) },
  { name: 'date within the_past_month', filters: [f('Due', 'is_within', null, 'the_past_month')], expect: ids(8, 11, 17, 18) },
  { name: 'date within this_month', filters: [f('Due', 'is_within', null, 'this_month')] },
  { name: 'date within the_next_month', filters: [f('Due', 'is_within', null, 'the_next_month')], expect: ids(12) },
  { name: 'date within the_past_year', filters: [f('Due', 'is_within', null, 'the_past_year')], expect: ids(20) },
  { name: 'date within this_year', filters: [f('Due', 'is_within', null, 'this_year')] },
  { name: 'date within the_next_year', filters: [f('Due', 'is_within', null, 'the_next_year')], expect: ids(21) },
  { name: 'date within the_next_numbers_of_days', filters: [f('Due', 'is_within', 1, 'the_next_numbers_of_days')], expect: ids(1, 2, 7, 23, 24, 30) },
  { name: 'date within the_past_numbers_of_days', filters: [f('Due', 'is_within', 2, 'the_past_numbers_of_days')] },
  {
    name: 'near-deadline window: today ≤ date ≤ today+3',
    filters: [f('Due', 'is_on_or_after', null, 'today'), f('Due', 'is_before', 4, 'number_of_days_from_now')],
    expect: ids(1, 2, 7, 23, 24, 30),
  },
  // ctime / mtime are instants: days are local days in the context's zone
  { name: 'ctime is today (Auckland midnight boundary)', filters: [f('Created', 'is', null, 'today')], expect: ids(1) },
  { name: 'ctime is yesterday', filters: [f('Created', 'is', null, 'yesterday')], expect: ids(2) },
  { name: 'ctime is_before today', filters: [f('Created', 'is_before', null, 'today')] },
  { name: 'ctime is_not today', filters: [f('Created', 'is_not', null, 'today')] },
  { name: 'ctime on_or_after exact date', filters: [f('Created', 'is_on_or_after', '2024-03-10', 'exact_date')] },
  { name: 'ctime exact_date_time', filters: [f('Created', 'is', '2024-03-11 00:00', 'exact_date_time')] },
  { name: 'ctime within this_week', filters: [f('Created', 'is_within', null, 'this_week')] },
  { name: 'ctime is_empty never', filters: [f('Created', 'is_empty')], expect: [] },
  { name: 'mtime within past 1 day', filters: [f('Modified', 'is_within', 1, 'the_past_numbers_of_days')] },
  { name: 'mtime is_not_empty always', filters: [f('Modified', 'is_not_empty')], expect: ALL },
  // single-select
  { name: 'single-select is by name', filters: [f('Status', 'is', 'Open')], expect: ids(1) },
  { name: 'single-select is by option id', filters: [f('Status', 'is', 'o003')], expect: ids(3) },
  { name: 'single-select is_not keeps empties', filters: [f('Status', 'is_not', 'o001')], expect: except(1) },
  { name: 'single-select is_any_of ids and names', filters: [f('Status', 'is_any_of', ['o001', 'Closed'])], expect: ids(1, 2, 8) },
  { name: 'single-select is_none_of', filters: [f('Status', 'is_none_of', ['o001', 'Closed'])], expect: except(1, 2, 8) },
  { name: 'single-select is_empty', filters: [f('Status', 'is_empty')], expect: except(1, 2, 3, 7, 8) },
  { name: 'single-select is_not_empty', filters: [f('Status', 'is_not_empty')], expect: ids(1, 2, 3, 7, 8) },
  // multiple-select
  { name: 'multi has_any_of', filters: [f('Tags', 'has_any_of', ['red'])], expect: ids(1, 2, 3, 8, 10) },
  { name: 'multi has_all_of', filters: [f('Tags', 'has_all_of', ['t001', 'blue'])], expect: ids(1, 3, 8) },
  { name: 'multi has_none_of keeps empties and non-arrays', filters: [f('Tags', 'has_none_of', ['red'])], expect: except(1, 2, 3, 8, 10) },
  { name: 'multi is_exactly (set equality)', filters: [f('Tags', 'is_exactly', ['red', 'blue'])], expect: ids(1, 3) },
  { name: 'multi is_exactly with duplicates in cell', filters: [f('Tags', 'is_exactly', 'red')], expect: ids(2, 10) },
  { name: 'multi is_exactly rejects non-string elements', filters: [f('Tags', 'is_exactly', ['blue'])], expect: [] },
  { name: 'multi is_empty', filters: [f('Tags', 'is_empty')] },
  { name: 'multi is_not_empty', filters: [f('Tags', 'is_not_empty')] },
  // collaborator
  { name: 'collaborator has_any_of', filters: [f('People', 'has_any_of', [U2])], expect: ids(2, 3, 8) },
  { name: 'collaborator has_all_of', filters: [f('People', 'has_all_of', [U1, U2])], expect: ids(2, 8) },
  { name: 'collaborator has_none_of', filters: [f('People', 'has_none_of', [U1])] },
  { name: 'collaborator is_exactly', filters: [f('People', 'is_exactly', [U1])], expect: ids(1) },
  { name: 'collaborator include_me', filters: [f('People', 'include_me')], expect: ids(1, 2, 8) },
  { name: 'collaborator is_empty', filters: [f('People', 'is_empty')] },
  // creator / last-modifier
  { name: 'creator contains', filters: [f('Creator', 'contains', [U1, 'my-app'])] },
  { name: 'creator does_not_contain keeps empty creators', filters: [f('Creator', 'does_not_contain', [U1])] },
  { name: 'creator is (first user)', filters: [f('Creator', 'is', [U1, U2])] },
  { name: 'creator is_not', filters: [f('Creator', 'is_not', U1)] },
  { name: 'creator include_me', filters: [f('Creator', 'include_me')] },
  { name: 'last-modifier is an app name', filters: [f('Modifier', 'is', 'my-app')] },
  // file, image, long-text
  { name: 'file is_empty', filters: [f('Files', 'is_empty')], expect: except(29) },
  { name: 'image is_not_empty', filters: [f('Pics', 'is_not_empty')], expect: ids(29) },
  { name: 'long-text is_empty', filters: [f('Notes', 'is_empty')], expect: except(29) },
  // groups
  { name: 'Or conjunction', filters: [f('Status', 'is', 'Open'), f('Amount', 'less', 0)], conjunction: 'Or', expect: ids(1, 3, 12) },
  { name: 'lower-case conjunction', filters: [f('Status', 'is', 'Open'), f('Amount', 'less', 0)], conjunction: 'or', expect: ids(1, 3, 12) },
  {
    name: 'nested groups',
    filters: [
      f('Tags', 'has_any_of', ['red']),
      { filter_conjunction: 'Or', filters: [f('Amount', 'greater', 10), { filters: [f('Done', 'is', true), f('Name', 'contains', 'alp')] }] },
    ],
    expect: ids(1, 2, 8),
  },
  { name: 'negations inside Or', filters: [f('Name', 'is_not', 'Alpha'), f('Tags', 'has_none_of', ['red'])], conjunction: 'Or' },
  { name: 'group emptied by incomplete items is ignored', filters: [f('Status', 'is', 'Open'), { filters: [f('Name', 'contains', '')] }], expect: ids(1) },
  { name: 'no filters', filters: [], expect: ALL },
];

describe.each(DIALECTS)('filter engine equivalence (%s)', (dialect) => {
  let handle: DbHandle;
  let db: Kysely<ScratchDb>;

  beforeAll(async () => {
    handle = await createTestDatabase(dialect);
    db = handle.db as unknown as Kysely<ScratchDb>;
    await db.schema
      .createTable('base_rows')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('base_id', 'integer', (c) => c.notNull())
      .addColumn('table_id', 'varchar(8)', (c) => c.notNull())
      .addColumn('row_id', 'varchar(22)', (c) => c.notNull())
      .addColumn('data', dialect === 'postgres' ? 'jsonb' : 'text', (c) => c.notNull())
      .addColumn('ctime', 'bigint', (c) => c.notNull())
      .addColumn('mtime', 'bigint', (c) => c.notNull())
      .addColumn('creator', 'varchar(255)')
      .addColumn('last_modifier', 'varchar(255)')
      .execute();
    await db.schema.createTable('other_rows').addColumn('row_id', 'varchar(22)').addColumn('data', 'text').execute();
    await db
      .insertInto('base_rows')
      .values([
        // The fixture rows as records of the table made above (the filter engine reads `data` and the row fields).
        ...ROWS.map((r, i) => {
          const { _id: row_id, _ctime: ctime, _mtime: mtime, _creator: creator, _last_modifier: last_modifier } = r;
          return { id: i + 1, base_id: 1, table_id: '0000', row_id, data: JSON.stringify(r.data), ctime, mtime, creator, last_modifier };
        }),
        // A row of another base: the filter composes with the caller's own conditions.
        { id: 999, base_id: 2, table_id: '0000', row_id: 'other', data: '{"0000":"Alpha"}', ctime: NOW, mtime: NOW, creator: U1, last_modifier: U1 },
      ])
      .execute();
    await db.insertInto('other_rows').values({ row_id: 'r01', data: '{}' }).execute();
  });

  afterAll(async () => {
    await handle?.close();
  });

  it('has the row set it was written for', () => {
    expect(ROWS).toHaveLength(30);
    expect(new Set(ALL).size).toBe(30);
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const parsed = parseFilters({ filters: c.filters, filter_conjunction: c.conjunction }, COLUMNS);
      if (!parsed.ok) throw new Error(parsed.error);
      for (const [label, ctx] of Object.entries(CONTEXTS)) {
        const inMemory = ROWS.filter((r) => matchesRow(parsed.filter, r, ctx)).map((r) => r._id);
        const rows = await db
          .selectFrom('base_rows')
          .select('row_id')
          .where('base_id', '=', 1)
          .where(filterToSql(parsed.filter, ctx, dialect))
          .orderBy('id')
          .execute();
        expect(rows.map((r) => r.row_id), `${label}: SQL vs memory`).toEqual(inMemory);
        if (label === 'auckland' && c.expect) expect(inMemory, `${label}: hand-written answer`).toEqual(c.expect);
      }
    });
  }

  it('agrees with memory on 300 random filters in every context', async () => {
    const rand = prng(7);
    let effective = 0;
    for (let i = 0; i < 300; i += 1) {
      const spec = { filters: [randomFilter(rand), randomFilter(rand)], filter_conjunction: rand() < 0.5 ? 'And' : 'Or' };
      const parsed = parseFilters(spec, COLUMNS);
      if (!parsed.ok || parsed.filter.root === null) continue;
      effective += 1;
      for (const [label, ctx] of Object.entries(CONTEXTS)) {
        const inMemory = ROWS.filter((r) => matchesRow(parsed.filter, r, ctx)).map((r) => r._id);
        const rows = await db.selectFrom('base_rows').select('row_id').where('base_id', '=', 1).where(filterToSql(parsed.filter, ctx, dialect)).orderBy('id').execute();
        expect(rows.map((r) => r.row_id), `${label}: ${JSON.stringify(spec)}`).toEqual(inMemory);
      }
    }
    expect(effective).toBeGreaterThan(100);
  });

  it('works on an aliased table joined to another with a data column', async () => {
    const parsed = parseFilters({ filters: [f('Name', 'contains', 'alpha'), f('Tags', 'has_any_of', ['red'])] }, COLUMNS);
    if (!parsed.ok) throw new Error(parsed.error);
    const rows = await db
      .selectFrom('base_rows as r')
      .innerJoin('other_rows as o', 'o.row_id', 'r.row_id')
      .select('r.row_id')
      .where(filterToSql(parsed.filter, CONTEXTS.auckland!, dialect, 'r'))
      .execute();
    expect(rows.map((r) => r.row_id)).toEqual(['r01']);
  });

  it('binds every user value as a parameter', () => {
    const evil = `x'); drop table base_rows; --`;
    const parsed = parseFilters({ filters: [f('Name', 'contains', evil), f('Status', 'is_any_of', [evil]), f('Odd key', 'is', evil)] }, COLUMNS);
    if (!parsed.ok) throw new Error(parsed.error);
    const compiled = db.selectFrom('base_rows').select('row_id').where(filterToSql(parsed.filter, CONTEXTS.utc!, dialect)).compile();
    expect(compiled.sql).not.toContain('drop table');
    expect(compiled.sql).not.toContain('a.b $[0]');
    expect(compiled.parameters.some((p) => String(p).includes('a.b $[0]'))).toBe(true);
    // Plain keys are literals (the row indexes' expressions); odd keys stay parameters.
    expect(compiled.sql).toContain(dialect === 'postgres' ? `'Ss00'` : `'$."Ss00"'`);
    expect(compiled.parameters).toContain(evil);
  });

  describe('through expression indexes', () => {
    // The indexes row-indexes.ts builds, on the same expressions (cell-sql.ts), one per column and value type.
    const INDEXED = COLUMNS.filter((c) => indexableKey(c.key)).flatMap((c) => [
      { key: c.key, type: 'number' as const },
      { key: c.key, type: 'text' as const },
    ]);

    /** Runs `work` on one connection where the planner prefers the indexes (PostgreSQL: no sequential scans). */
    async function withIndexes<T>(work: (conn: Kysely<ScratchDb>) => Promise<T>): Promise<T> {
      return db.connection().execute(async (conn) => {
        if (dialect === 'postgres') await sql`set enable_seqscan = off`.execute(conn);
        try {
          return await work(conn);
        } finally {
          if (dialect === 'postgres') await sql`reset enable_seqscan`.execute(conn);
        }
      });
    }

    beforeAll(async () => {
      for (const [i, { key, type }] of INDEXED.entries()) {
        const value = indexedValue(dialect, sql.ref('data'), key, type).compile(db).sql;
        await sql.raw(`create index eq_idx_${i} on base_rows (${value}, id)`).execute(db);
      }
    });

    it('answers every fixture case as in memory', async () => {
      await withIndexes(async (conn) => {
        for (const c of CASES) {
          const parsed = parseFilters({ filters: c.filters, filter_conjunction: c.conjunction }, COLUMNS);
          if (!parsed.ok) throw new Error(parsed.error);
          for (const [label, ctx] of Object.entries(CONTEXTS)) {
            const inMemory = ROWS.filter((r) => matchesRow(parsed.filter, r, ctx)).map((r) => r._id);
            const rows = await conn.selectFrom('base_rows').select('row_id').where('base_id', '=', 1).where(filterToSql(parsed.filter, ctx, dialect)).orderBy('id').execute();
            expect(rows.map((r) => r.row_id), `${c.name} / ${label}`).toEqual(inMemory);
          }
        }
      });
    });

    it('answers 300 random filters as in memory', async () => {
      const rand = prng(11);
      await withIndexes(async (conn) => {
        for (let i = 0; i < 300; i += 1) {
          const spec = { filters: [randomFilter(rand), randomFilter(rand)], filter_conjunction: rand() < 0.5 ? 'And' : 'Or' };
          const parsed = parseFilters(spec, COLUMNS);
          if (!parsed.ok || parsed.filter.root === null) continue;
          const ctx = CONTEXTS.auckland!;
          const inMemory = ROWS.filter((r) => matchesRow(parsed.filter, r, ctx)).map((r) => r._id);
          const rows = await conn.selectFrom('base_rows').select('row_id').where(filterToSql(parsed.filter, ctx, dialect)).where('base_id', '=', 1).orderBy('id').execute();
          expect(rows.map((r) => r.row_id), JSON.stringify(spec)).toEqual(inMemory);
        }
      });
    });

    it('lets the planner use an index for numbers, options and date ranges', async () => {
      const cases = [
        [f('Amount', 'greater', 10)],
        [f('Status', 'is_any_of', ['Open', 'Closed'])],
        [f('Due', 'is_within', 3, 'the_next_numbers_of_days')],
      ];
      await withIndexes(async (conn) => {
        for (const filters of cases) {
          const parsed = parseFilters({ filters }, COLUMNS);
          if (!parsed.ok) throw new Error(parsed.error);
          const query = conn.selectFrom('base_rows').select('row_id').where(filterToSql(parsed.filter, CONTEXTS.auckland!, dialect)).compile();
          const plan = await explain(conn, dialect, query.sql, query.parameters);
          expect(plan, JSON.stringify(filters)).toMatch(/eq_idx_\d+/);
        }
      });
    });
  });
});

/** The query plan as one text (SQLite: EXPLAIN QUERY PLAN details; PostgreSQL: EXPLAIN lines). */
async function explain(conn: Kysely<ScratchDb>, dialect: string, text: string, parameters: readonly unknown[]): Promise<string> {
  const prefix = dialect === 'postgres' ? 'explain ' : 'explain query plan ';
  const result = await conn.executeQuery(CompiledQuery.raw(prefix + text, [...parameters]));
  return (result.rows as Array<Record<string, unknown>>).map((r) => String(r.detail ?? r['QUERY PLAN'] ?? '')).join('\n');
}
