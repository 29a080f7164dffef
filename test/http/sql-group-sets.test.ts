import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';
import { sqlCalls } from './row-index.fixtures.js';

/**
 * SQL grouped statements answered from group sets (rows/group-sets.ts, sql/group-set-plans.ts): the same
 * results as the scan of every row (the sets switched off, same run), before and after every kind of
 * write, with empty cells and values stored with another JSON type than the column's; sets follow type
 * changes and column deletions; a failed or crashed build leaves nothing. "Big" is lowered to 100 rows.
 */
describe.each(DIALECTS)('SQL grouped statements from group sets (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let ids: string[] = [];

  /** Answered from a set once it is built. */
  const FROM_SET = [
    'SELECT Kind, COUNT(*) FROM G GROUP BY Kind',
    'SELECT Kind, COUNT(*), SUM(Qty), AVG(Qty), COUNT(Qty) FROM G GROUP BY Kind',
    'SELECT Kind, COUNT(Kind), MIN(Kind), MAX(Kind) FROM G GROUP BY Kind ORDER BY COUNT(*) DESC, Kind LIMIT 2',
    "SELECT Kind, SUM(Qty) AS s FROM G WHERE Kind <> 'Open' OR Kind IS NULL GROUP BY Kind HAVING SUM(Qty) > 10 ORDER BY s DESC",
    'SELECT COUNT(*), SUM(Qty), AVG(Qty) FROM G WHERE Kind IS NULL',
    "SELECT COUNT(*), SUM(Qty) FROM G WHERE Kind = 'nothing'",
    'SELECT COUNT(DISTINCT Kind), COUNT(Kind) FROM G',
    'SELECT DISTINCT Team FROM G ORDER BY Team DESC LIMIT 5',
    'SELECT Team, COUNT(*) AS n FROM G GROUP BY Team ORDER BY n DESC, Team',
    "SELECT Team, COUNT(*) FROM G WHERE Team ILIKE 'a%' GROUP BY Team",
    'SELECT Done, COUNT(*), SUM(Qty) FROM G GROUP BY Done',
    'SELECT Qty, COUNT(*) FROM G GROUP BY Qty ORDER BY Qty DESC',
    'SELECT Qty, COUNT(*) FROM G WHERE Qty >= 3 GROUP BY Qty',
  ];
  /** Never answered from a set (the scan), compared all the same. */
  const SCAN = [
    'SELECT Kind, SUM(Price), AVG(Price) FROM G GROUP BY Kind',
    'SELECT Kind, MIN(Qty) FROM G GROUP BY Kind',
    'SELECT Kind, COUNT(*) FROM G WHERE Qty > 3 GROUP BY Kind',
    'SELECT Due, COUNT(*) FROM G GROUP BY Due',
    'SELECT Kind, COUNT(DISTINCT Qty) FROM G GROUP BY Kind',
  ];
  const ALL = [...FROM_SET, ...SCAN];

  const { run, explain } = sqlCalls(() => ({ t, g }));
  const sets = () => t.container.baseData.groupSets;

  /** Every statement with the sets on equals the same statement with them off; those of FROM_SET read a set. */
  async function expectSameAsScan(fromSet = FROM_SET) {
    for (const statement of ALL) {
      sets().options.enabled = true;
      const withSets = await run(statement);
      const plan = await explain(statement);
      sets().options.enabled = false;
      const scanned = await run(statement);
      sets().options.enabled = true;
      expect(withSets, statement).toEqual(scanned);
      expect(plan.includes('row_group_rows'), `${statement}: ${plan}`).toBe(fromSet.includes(statement));
    }
  }

  async function buildSets() {
    for (const statement of ALL) await run(statement);
    await sets().idle();
  }

  const storedCount = async (table: 'row_group_defs' | 'row_group_rows') => Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(t.container.db)).rows[0]!.n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'G', [
      { column_name: 'Kind', column_type: 'single-select' },
      { column_name: 'Team', column_type: 'text' },
      { column_name: 'Qty', column_type: 'number' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Done', column_type: 'checkbox' },
      { column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD' } },
    ]);
    tableId = table._id;
    const kinds = ['Open', 'Closed', 'Waiting'];
    const teams = ['a', 'A', 'b', 'apple', 'Äpfel', '[x', '{y'];
    ids = await appendRows(
      g,
      'G',
      Array.from({ length: 300 }, (_, i) => {
        const row: Record<string, unknown> = {};
        if (i % 5 !== 0) row.Kind = kinds[i % 3];
        if (i % 9 !== 0) row.Team = teams[i % teams.length];
        if (i % 7 !== 0) row.Qty = [0, 1, 2, 5, -3, 1000, 7][i % 7];
        if (i % 6 !== 0) row.Price = [2.5, 0.1, 99.75, 3][i % 4];
        if (i % 2 === 0) row.Done = true;
        if (i % 4 !== 0) row.Due = `2026-0${1 + (i % 5)}-0${1 + (i % 3)}`;
        return row;
      }),
    );
    // Cells no write of these column types stores, written straight into storage.
    const key = (name: string) => table.columns.find((c) => c.name === name)!.key;
    const odd: Array<Record<string, unknown>> = [
      { Qty: true, Team: ['a'], Kind: '', Done: 1 },
      { Qty: '12', Team: 5, Kind: ['Open'], Done: 'true' },
      { Qty: [1], Team: '', Kind: 3 },
      { Qty: { v: 1 }, Team: null, Kind: 'Unknown' },
      { Qty: 1.0, Team: '1' },
    ];
    for (const [i, cells] of odd.entries()) {
      const data = JSON.stringify(Object.fromEntries(Object.entries(cells).map(([name, value]) => [key(name), value])));
      await t.container.db
        .updateTable('base_rows')
        .set({ data: dialect === 'postgres' ? sql`cast(${data} as jsonb)` : data } as never)
        .where('base_id', '=', g.base.id)
        .where('row_id', '=', ids[i * 30 + 1]!)
        .execute();
    }
  });
  afterAll(() => t.close());

  it('answers as the scan does once a big table has sets, and not while it is small', async () => {
    sets().options.minRows = 1000;
    await buildSets();
    expect(await sets().setsOf(g.base.id, tableId)).toEqual([]);
    await expectSameAsScan([]);

    sets().options.minRows = 100;
    sets().options.recountMs = 0;
    await buildSets();
    const built = await sets().setsOf(g.base.id, tableId);
    // Kind; Kind+Qty; Kind+Price (built, but its sums are inexact: SUM and AVG read the rows); Team; Done+Qty; Qty.
    expect(built.map((s) => `${s.groupType}:${s.valueKey ? 'v' : '-'}`).sort()).toEqual(['checkbox:v', 'number:-', 'single-select:-', 'single-select:v', 'single-select:v', 'text:-']);
    await expectSameAsScan();
  });

  it('stays exact through appends, updates, deletes, archived rows, SQL writes and writes straight into storage', async () => {
    expect((await sets().setsOf(g.base.id, tableId)).length).toBeGreaterThan(0);
    const more = await appendRows(g, 'G', [{ Kind: 'Open', Qty: 4, Team: 'new' }, { Kind: 'Fresh', Qty: 9 }, { Qty: 2, Done: true }, {}]);
    await expectSameAsScan();

    const updates = [
      { row_id: ids[3]!, row: { Kind: 'Closed', Qty: 11 } },
      { row_id: ids[4]!, row: { Kind: null, Team: 'zz' } },
      { row_id: more[0]!, row: { Qty: null, Done: false } },
      { row_id: ids[10]!, row: { Price: 5 } },
    ];
    expect((await g.call('PUT', 'rows/', { table_name: 'G', updates })).statusCode).toBe(200);
    await expectSameAsScan();

    expect((await g.call('DELETE', 'rows/', { table_name: 'G', row_ids: [ids[5]!, ids[6]!, more[1]!] })).statusCode).toBe(200);
    await expectSameAsScan();

    expect((await g.call('POST', 'add-archived-rows/', { table_name: 'G', rows: [{ Kind: 'Open', Qty: 100 }, { Kind: 'Archived', Qty: 1 }] })).statusCode).toBe(200);
    await expectSameAsScan();

    for (const statement of ["INSERT INTO G (Kind, Qty, Team) VALUES ('Waiting', 8, 'sql')", "UPDATE G SET Qty = 3 WHERE Kind = 'Open'", "DELETE FROM G WHERE Team = 'b'", "UPDATE G SET Kind = 'Closed' WHERE Qty = 1000"]) {
      const res = await g.call('POST', 'sql/', { sql: statement });
      expect(res.statusCode, `${statement}: ${res.body}`).toBe(200);
    }
    await expectSameAsScan();

    // Decimals added and taken away again: SUM and AVG are answered from the set again, and exactly (a
    // decimal that entered the kept sum left a rounding residue behind it).
    const decimals = await appendRows(g, 'G', [0.1, 0.2, 0.7, 1 / 3, 123456.789].map((Qty) => ({ Kind: 'Open', Qty })));
    expect((await g.call('DELETE', 'rows/', { table_name: 'G', row_ids: decimals })).statusCode).toBe(200);
    await expectSameAsScan();

    // A write no endpoint makes (a restore, an import's move of staged rows: statements on base_rows).
    if (dialect === 'postgres') {
      await sql`update base_rows set data = data || '{"_archived": true}'::jsonb where base_id = ${g.base.id} and row_id = ${ids[7]!}`.execute(t.container.db);
      await sql`update base_rows set table_id = 'zzzz' where base_id = ${g.base.id} and row_id = ${ids[8]!}`.execute(t.container.db);
    } else {
      await sql`update base_rows set data = json_set(data, '$._archived', json('true')) where base_id = ${g.base.id} and row_id = ${ids[7]!}`.execute(t.container.db);
      await sql`update base_rows set table_id = 'zzzz' where base_id = ${g.base.id} and row_id = ${ids[8]!}`.execute(t.container.db);
    }
    await expectSameAsScan();

    if (dialect === 'postgres') {
      // The writes left a delta row each; compaction merges them into one row per group value.
      for (const set of await sets().setsOf(g.base.id, tableId)) await sets().compact(set);
      const { rows } = await sql<{ n: string; d: string }>`select count(*) as n, count(distinct (coalesce(txt, ''), coalesce(num, 'NaN'))) as d from row_group_rows group by set_id`.execute(t.container.db);
      for (const row of rows) expect(row.n).toBe(row.d);
      await expectSameAsScan();
    }
  });

  it('follows type changes (dropped, then built for the new type) and column deletions', async () => {
    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'G', ...body });
    expect((await put({ op_type: 'modify_column_type', column: 'Kind', new_column_type: 'text' })).statusCode).toBe(200);
    await sets().idle();
    const types = (await sets().setsOf(g.base.id, tableId)).map((s) => s.groupType);
    expect(types).not.toContain('single-select');
    expect(types.filter((type) => type === 'text').length).toBeGreaterThanOrEqual(2);
    await expectSameAsScan();

    expect((await g.call('DELETE', 'columns/', { table_name: 'G', column: 'Team' })).statusCode).toBe(200);
    await sets().idle();
    const left = await sets().setsOf(g.base.id, tableId);
    const columns = (await g.call('GET', 'columns/?table_name=G')).json<{ columns: Array<{ key: string }> }>().columns.map((c) => c.key);
    for (const set of left) expect(columns).toContain(set.groupKey);
    const remaining = ALL.filter((s) => !s.includes('Team'));
    for (const statement of remaining) {
      sets().options.enabled = true;
      const withSets = await run(statement);
      sets().options.enabled = false;
      expect(withSets, statement).toEqual(await run(statement));
      sets().options.enabled = true;
    }
  });

  it('leaves nothing when a build fails or crashed', async () => {
    await sets().idle();
    const before = { defs: await storedCount('row_group_defs'), rows: await storedCount('row_group_rows') };
    const statement = 'SELECT Price, COUNT(*) FROM G GROUP BY Price';
    sets().options.maxGroups = 1;
    await run(statement);
    await sets().idle();
    expect(sets().stats.refused).toBeGreaterThan(0);
    expect({ defs: await storedCount('row_group_defs'), rows: await storedCount('row_group_rows') }).toEqual(before);
    sets().options.maxGroups = 10_000;

    // A build that fails after counting (as a crash there would): its transaction leaves nothing.
    sets().onFill = () => Promise.reject(new Error('build failed'));
    await run(statement);
    await sets().idle();
    expect(sets().stats.failed).toBeGreaterThan(0);
    expect({ defs: await storedCount('row_group_defs'), rows: await storedCount('row_group_rows') }).toEqual(before);
    expect(await explain(statement)).not.toMatch(/row_group_rows/);
    await sets().idle();
    sets().onFill = undefined;

    if (dialect === 'postgres') {
      // A process that died while building: its definition stays `building`, counted by the triggers.
      await sql`insert into row_group_defs (name, base_id, table_id, group_key, group_kind, group_type, state, created_at)
        values ('brg_dead', ${g.base.id}, ${tableId}, 'x', 'text', 'text', 'building', 0)`.execute(t.container.db);
      await appendRows(g, 'G', [{ Qty: 1 }]);
      const dead = Number((await sql<{ id: number | string }>`select id from row_group_defs where name = 'brg_dead'`.execute(t.container.db)).rows[0]!.id);
      expect(Number((await sql<{ n: number | string }>`select count(*) as n from row_group_rows where set_id = ${dead}`.execute(t.container.db)).rows[0]!.n)).toBe(1);
      expect(await sets().recover()).toEqual(['brg_dead']);
      expect((await sql`select id from row_group_defs where name = 'brg_dead'`.execute(t.container.db)).rows).toEqual([]);
      expect((await sql`select set_id from row_group_rows where set_id = ${dead}`.execute(t.container.db)).rows).toEqual([]);
      expect(await storedCount('row_group_defs')).toBe(before.defs);
    }
  });

  // SQLite builds a set in one write transaction: no write can come between.
  if (dialect === 'postgres')
  it('counts a write made while a set is built (PostgreSQL: between its definition and its rows)', async () => {
    const statement = 'SELECT Done, COUNT(*), COUNT(Price) FROM G GROUP BY Done';
    sets().beforeFill = async () => {
      sets().beforeFill = undefined;
      await appendRows(g, 'G', [{ Done: true, Price: 1 }, { Price: 2 }]);
    };
    await run(statement);
    await sets().idle();
    expect(sets().beforeFill).toBeUndefined();
    const plan = await explain(statement);
    expect(plan).toMatch(/row_group_rows/);
    const withSets = await run(statement);
    sets().options.enabled = false;
    expect(withSets).toEqual(await run(statement));
    sets().options.enabled = true;
  });
});
