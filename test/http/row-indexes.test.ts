import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { executeIndexed, ORDERED_SCAN } from '../../src/modules/rows/index.js';
import { type Gateway } from './rows.fixtures.js';
import { bigTable } from './row-index.fixtures.js';
import { filterToSql, indexableTerms, parseFilters } from '../../src/modules/filters/index.js';
import { matchingRows, type MatchRead } from '../../src/modules/notifications/index.js';

/**
 * Row indexes (rows/row-indexes.ts): built for the columns a big table is filtered and sorted on, used
 * by the planner (EXPLAIN), giving the same answers as without them, and following the structure.
 * "Big" is lowered to 100 rows here; the table has 300.
 */
describe.each(DIALECTS)('row indexes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let rows: Array<Record<string, unknown>>;

  // The page cache would answer repeated requests without reading the table: evicted before each.
  const evict = () => t.container.baseData.snapshots.evict(g.base.id);
  const filtered = async (filters: unknown[], query = '') => {
    evict();
    const res = await g.call('POST', `filtered-rows/?table_name=Big&convert_keys=true${query}`, { filters, filter_conjunction: 'And' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Name);
  };
  const sorted = async (query: string) => {
    evict();
    const res = await g.call('GET', `rows/?table_name=Big&convert_keys=true&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Name);
  };

  const REQUESTS: Array<() => Promise<unknown>> = [
    () => filtered([{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }]),
    () => filtered([{ column_name: 'Price', filter_predicate: 'less_or_equal', filter_term: 50 }], '&limit=7&start=2'),
    () => filtered([{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Waiting' }]),
    () => filtered([{ column_name: 'Kind', filter_predicate: 'is_none_of', filter_term: ['Open'] }]),
    () => filtered([{ column_name: 'Due', filter_predicate: 'is_on_or_after', filter_term: '2026-08-15', filter_term_modifier: 'exact_date' }]),
    () => filtered([{ column_name: 'Due', filter_predicate: 'is', filter_term: '2026-03-03 10:30', filter_term_modifier: 'exact_date_time' }]),
    () => filtered([{ column_name: 'Price', filter_predicate: 'not_equal', filter_term: 37 }], '&limit=20&start=250'),
    () => sorted('order_by=Price&limit=50'),
    () => sorted('order_by=Price&direction=desc&limit=50&start=240'),
    () => sorted('order_by=Due&limit=30'),
    () => sorted('order_by=Name&direction=desc&limit=30'),
  ];

  const explain = (input: Record<string, unknown>, filters?: unknown[]) =>
    t.container.baseData.rows.explainList({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'Big', ...input }, {}, filters ? { filters } : undefined);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    ({ g, tableId, rows } = await bigTable(t, { due: true }));
  });
  afterAll(() => t.close());

  const indexes = () => t.container.baseData.indexes;
  const indexNames = async () => (await indexes().indexesOf(g.base.id, tableId)).map((e) => `${e.column_key}:${e.kind}`).sort();

  it('builds no index for a small table', async () => {
    indexes().options.minRows = 1000;
    for (const request of REQUESTS) await request();
    await indexes().idle();
    expect(await indexNames()).toEqual([]);
  });

  it('answers the same with indexes as without, and the planner uses them', async () => {
    // Without indexes (the table is "small"): the answers to compare with.
    const before = [];
    for (const request of REQUESTS) before.push(await request());
    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    for (const request of REQUESTS) await request();
    await indexes().idle();
    const names = await indexNames();
    const columns = (await g.call('GET', 'columns/?table_name=Big')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    const [price, kind, due, name] = ['Price', 'Kind', 'Due', 'Name'].map((n) => columns.find((c) => c.name === n)!.key);
    const filterKind = dialect === 'postgres' ? 'asc' : 'filter';
    expect(names).toEqual(expect.arrayContaining([`${price}:${filterKind}`, `${price}:desc`, `${kind}:${filterKind}`, `${due}:${filterKind}`, `${name}:desc`]));
    expect(names).toContain(`${price}:asc`);

    const after = [];
    for (const request of REQUESTS) after.push(await request());
    expect(after).toEqual(before);

    // The plans name the table's indexes (index names start with bri_<base id>_).
    const prefix = new RegExp(`bri_${g.base.id}_`);
    expect(await explain({ order_by: 'Price', limit: 50 })).toMatch(prefix);
    expect(await explain({ order_by: 'Price', direction: 'desc', limit: 50 })).toMatch(prefix);
    if (dialect === 'sqlite') {
      // PostgreSQL decides by its statistics (300 rows are read faster in a scan); SQLite by the shape.
      expect(await explain({}, [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }])).toMatch(prefix);
      expect(await explain({}, [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Waiting' }])).toMatch(prefix);
    }
  });

  it('reads a filter matching many rows in the listing order (PostgreSQL: no sort), with the same answers', async () => {
    // The probe's cap lowered to 50: "Kind is Waiting" matches 80 rows (many), "Price > 900" about 25 (few).
    const answers = [];
    for (const request of REQUESTS) answers.push(await request());
    indexes().options.probeCap = 50;
    try {
      const many = await explain({ limit: 10, start: 5 }, [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Waiting' }]);
      const few = await explain({ limit: 10 }, [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }]);
      const prefix = new RegExp(`bri_${g.base.id}_`);
      if (dialect === 'postgres') {
        // Sorts disabled for this query: an index in id order is read up to the page, nothing sorted.
        expect(many).not.toMatch(/Sort/);
        expect(many).toMatch(/Index Scan/);
        // Inside a caller's transaction (the deadline scan's) the setting is restored afterwards.
        const db = t.container.db;
        const setting = await db.transaction().execute(async (trx) => {
          const compiled = sql<{ n: number }>`select count(*)::int as n from base_rows where base_id = ${g.base.id} and table_id = ${tableId}`.compile(trx);
          expect((await executeIndexed(trx, compiled, ORDERED_SCAN))[0]!.n).toBe(rows.length);
          return (await sql<{ s: string }>`select current_setting('enable_sort') as s`.execute(trx)).rows[0]!.s;
        });
        expect(setting).toBe('on');
      } else {
        // The narrow range is read through its index (INDEXED BY after the probe).
        expect(few).toMatch(prefix);
      }
      const again = [];
      for (const request of REQUESTS) again.push(await request());
      expect(again).toEqual(answers);
    } finally {
      indexes().options.probeCap = 2000;
    }
  });

  it('looks for an unsorted filtered page in a walk of the next rows first (PostgreSQL), with the same answers, and probes first after a walk that fell short', async () => {
    // Filters matching 80 rows of 300 ("Kind is Waiting"), about 25 ("Price > 900") and none; pages that end
    // inside the walk, beyond it, and across its end (a skip), with windows of 1 to 300 rows.
    const pages: Array<[unknown[], string]> = [
      [[{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Waiting' }], '&limit=5'],
      [[{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Waiting' }], '&limit=7&start=9'],
      [[{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }], '&limit=10'],
      [[{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }], '&limit=4&start=3'],
      [[{ column_name: 'Price', filter_predicate: 'greater', filter_term: 5000 }], ''],
      [[{ column_name: 'Price', filter_predicate: 'less_or_equal', filter_term: 50 }, { column_name: 'Kind', filter_predicate: 'is_not', filter_term: 'Open' }], '&limit=3&start=1'],
    ];
    const rows = t.container.baseData.rows;
    const answer = () => Promise.all(pages.map(([filters, query]) => filtered(filters, query)));
    indexes().options.walkWindow = 0;
    const expected = await answer();
    expect(expected.map((names) => names.length)).toEqual([5, 7, 10, 4, 0, 3]);
    try {
      for (const window of [1, 7, 40, 300]) {
        indexes().options.walkWindow = window;
        for (const [i, [filters, query]] of pages.entries()) {
          indexes().forgetWalks();
          const walked = rows.walkedPages;
          expect(await filtered(filters, query), `window ${window}, page ${i}`).toEqual(expected[i]);
          // SQLite counts its probe in the index alone: it probes first, and never walks.
          expect(rows.walkedPages - walked).toBe(dialect === 'postgres' ? 1 : 0);
        }
      }
      if (dialect === 'postgres') {
        // "Kind is Waiting" fills a page of 5 within 40 rows: its next page walks again. "Price > 900" does
        // not (about 3 in 40): the next listing filtered on Price probes first, and the probe finds it narrow.
        indexes().options.walkWindow = 40;
        indexes().forgetWalks();
        const walkedAfter = async (filters: unknown[], query: string) => {
          const walked = rows.walkedPages;
          await filtered(filters, query);
          return rows.walkedPages - walked;
        };
        expect(await walkedAfter(...pages[0]!)).toBe(1);
        expect(await walkedAfter(...pages[0]!)).toBe(1);
        expect(await walkedAfter(...pages[2]!)).toBe(1);
        expect(await walkedAfter(...pages[2]!)).toBe(0);
        expect(await walkedAfter(...pages[3]!)).toBe(0);
      }
    } finally {
      indexes().options.walkWindow = 20_000;
      indexes().forgetWalks();
    }
  });

  it('walks every match of a range wider than any probe cap through its index, resuming by (value, id) over ties', async () => {
    // The deadline scans' read (notifications/deadline.repository.ts): pages of 7 over ranges matching
    // about a hundred rows each, with the probe cap at 10 — the id walk is the answer to compare with.
    indexes().options.probeCap = 10;
    try {
      const meta = await t.container.baseData.writer.read({ id: g.base.id, uuid: g.base.uuid });
      const table = meta.tables.find((x) => x.name === 'Big')!;
      const cases = [
        [{ column_name: 'Due', filter_predicate: 'is_within', filter_term_modifier: 'the_next_numbers_of_days', filter_term: 120 }],
        [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 300 }, { column_name: 'Kind', filter_predicate: 'is_not', filter_term: 'Open' }],
      ];
      const ctx = { now: Date.UTC(2026, 2, 1), timeZone: 'UTC' };
      for (const filters of cases) {
        const parsed = parseFilters({ filters, filter_conjunction: 'And' }, table.columns);
        if (!parsed.ok) throw new Error(parsed.error);
        const where = filterToSql(parsed.filter, ctx, dialect);
        const range = indexes().rangeRead(g.base.id, tableId, indexableTerms(parsed.filter, ctx, dialect));
        expect(range?.index).toMatch(new RegExp(`^bri_${g.base.id}_`));
        const walk = async (read: MatchRead) => {
          const ids: number[] = [];
          for await (const page of matchingRows(t.container.db, g.base.id, tableId, where, 7, read)) {
            expect(page.length).toBeLessThanOrEqual(7);
            ids.push(...page.map((r) => r.id));
          }
          return ids;
        };
        const byId = await walk({});
        const byRange = await walk({ range: range! });
        expect(byId.length).toBeGreaterThan(indexes().options.probeCap * 5);
        expect(new Set(byRange).size).toBe(byRange.length);
        expect([...byRange].sort((a, b) => a - b)).toEqual(byId);
      }
    } finally {
      indexes().options.probeCap = 2000;
    }
  });

  it('drops a column’s indexes when it is deleted or retyped, keeps them when renamed', async () => {
    const columns = (await g.call('GET', 'columns/?table_name=Big')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    const key = (name: string) => columns.find((c) => c.name === name)!.key;
    const ofKey = async (k: string) => (await indexNames()).filter((n) => n.startsWith(`${k}:`));
    expect(await ofKey(key('Kind'))).not.toEqual([]);
    // PostgreSQL: each indexed column's expression has a statistics object (its planner's estimates), dropped with the column's last index.
    const statistics = async () =>
      dialect === 'postgres' ? (await sql<{ n: string }>`select stxname as n from pg_statistic_ext where stxnamespace = current_schema()::regnamespace and stxname like ${`brs_${g.base.id}_%`}`.execute(t.container.db)).rows.map((r) => r.n) : [];
    const hexKey = (k: string) => Buffer.from(k).toString('hex');
    if (dialect === 'postgres') expect((await statistics()).some((n) => n.includes(`_${hexKey(key('Due'))}_`))).toBe(true);

    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'Big', ...body });
    expect((await put({ op_type: 'rename_column', column: 'Kind', new_column_name: 'State' })).statusCode).toBe(200);
    expect(await ofKey(key('Kind'))).not.toEqual([]);
    expect(await filtered([{ column_name: 'State', filter_predicate: 'is', filter_term: 'Waiting' }])).toHaveLength(
      rows.filter((r) => r.Kind === 'Waiting').length,
    );

    expect((await put({ op_type: 'modify_column_type', column: 'Price', new_column_type: 'text' })).statusCode).toBe(200);
    expect(await ofKey(key('Price'))).toEqual([]);
    // Filtering the retyped column again builds an index for its new type, and answers as text.
    expect(await filtered([{ column_name: 'Price', filter_predicate: 'is', filter_term: '74' }])).toEqual(['item 002']);
    await indexes().idle();
    expect(await ofKey(key('Price'))).toEqual([`${key('Price')}:${dialect === 'postgres' ? 'asc' : 'filter'}`]);

    expect((await g.call('DELETE', 'columns/', { table_name: 'Big', column: 'Due' })).statusCode).toBe(200);
    expect(await ofKey(key('Due'))).toEqual([]);
    expect((await statistics()).some((n) => n.includes(`_${hexKey(key('Due'))}_`))).toBe(false);

    expect((await g.call('DELETE', 'tables/', { table_name: 'Big' })).statusCode).toBe(200);
    expect(await indexNames()).toEqual([]);
    // Gone from the database too, not only from the list.
    const left = await t.container.db.selectFrom('row_indexes').select('name').where('base_id', '=', g.base.id).execute();
    expect(left).toEqual([]);
    expect(await statistics()).toEqual([]);
  });
});
