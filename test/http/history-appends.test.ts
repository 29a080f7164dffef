import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { LATER_READ_MAX } from '../../src/modules/history/insert-cells.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithGateway, type Gateway } from './rows.fixtures.js';

type Op = { op_id: number; op_type: string; operation: string; reverts: number | null };
type Activity = { id: number; op_type: string; detail: { row_name: string; row_data: Array<{ column_key: string; value: unknown }> } };

/**
 * An append of new rows is logged without copying their cells and without row-index entries
 * (operation-log.ts, row-operations.ts, insert-cells.ts): everything the log answers stays the same.
 */
describe.each(DIALECTS)('history: appends of new rows (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  const ops = async (query: string): Promise<Op[]> => {
    const res = await g.call('GET', `operations/${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().operations;
  };
  const activities = async (query: string): Promise<{ activities: Activity[]; total_count: number }> => {
    const res = await g.call('GET', `activities/${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const indexEntries = async (opId: number) => (await t.container.db.selectFrom('operation_log_rows').select('row_key').where('op_id', '=', opId).execute()).length;
  const rowNames = (op: Op) => (JSON.parse(op.operation) as { row_datas: Array<Record<string, unknown>> }).row_datas.map((r) => r['0000']);

  it('shows the cells as appended after later updates and deletes, from a log entry without them', async () => {
    const [a, b, c] = await appendRows(g, 'Table1', [{ Name: 'Ann' }, { Name: 'Bob' }, { Name: 'Cy' }]);
    const append = (await ops('?per_page=1'))[0]!;
    expect(append.op_type).toBe('insert_rows');
    expect(await indexEntries(append.op_id)).toBe(0);
    const stored = await t.container.db.selectFrom('operation_log').select('changes').where('id', '=', append.op_id).executeTakeFirstOrThrow();
    // Only the ids and the rows' names at the time.
    expect(JSON.parse(stored.changes)).toEqual({ o: 'insert_row', t: '0000', f: 1, ids: [a, b, c], names: ['Ann', 'Bob', 'Cy'] });

    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: a, row: { Name: 'Ann 2' } }] });
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: a, row: { Name: 'Ann 3' } }] });
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [b] });
    const logged = (await ops('?per_page=100')).find((o) => o.op_id === append.op_id)!;
    expect(rowNames(logged)).toEqual(['Ann', 'Bob', 'Cy']);
    expect((await ops(`?row_id=${a}`)).map((o) => o.op_type)).toEqual(['modify_row', 'modify_row', 'insert_rows']);
    expect((await ops(`?row_id=${b}`)).map((o) => o.op_type)).toEqual(['delete_row', 'insert_rows']);

    const history = await activities(`?row_id=${a}&per_page=10`);
    expect(history.total_count).toBe(3);
    expect(history.activities.map((x) => x.op_type)).toEqual(['modify_row', 'modify_row', 'insert_row']);
    expect(history.activities[2]!.detail.row_data).toMatchObject([{ column_key: '0000', value: 'Ann' }]);
    // Pages past the indexed operations reach the append.
    expect((await activities(`?row_id=${a}&per_page=2&page=2`)).activities.map((x) => x.op_type)).toEqual(['insert_row']);
    expect((await ops(`?row_id=${a}&per_page=1&page=3`)).map((o) => o.op_id)).toEqual([append.op_id]);
    expect(await ops(`?row_id=${a}&per_page=1&page=4`)).toEqual([]);
  });

  it('a row purged from the trash keeps its append in its history, without its cells', async () => {
    const [row] = await appendRows(g, 'Table1', [{ Name: 'Secret' }]);
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [row] });
    expect((await g.call('DELETE', `trash/rows/${row}/`)).statusCode).toBe(200);
    const history = await activities(`?row_id=${row}&per_page=10`);
    expect(history.activities.map((x) => x.op_type)).toEqual(['delete_row', 'insert_row']);
    expect(JSON.stringify(history)).not.toContain('Secret');
    expect(JSON.stringify(await ops(`?row_id=${row}`))).not.toContain('Secret');
  });

  it('undo and redo of an append: the rows go and come back, and the append still shows its cells', async () => {
    const [x, y] = await appendRows(g, 'Table1', [{ Name: 'X' }, { Name: 'Y' }]);
    const append = (await ops('?per_page=1'))[0]!;
    expect((await g.call('PUT', `restore-operations/${append.op_id}/`, {})).statusCode).toBe(200);
    const undo = (await ops('?per_page=1'))[0]!;
    expect(undo).toMatchObject({ op_type: 'delete_rows', reverts: append.op_id });
    expect((await g.call('PUT', `restore-operations/${undo.op_id}/`, {})).statusCode).toBe(200);
    const redo = (await ops('?per_page=1'))[0]!;
    expect(redo).toMatchObject({ op_type: 'insert_rows', reverts: undo.op_id });
    // Rows put back keep their creation time: logged with their cells and index entries.
    expect(await indexEntries(redo.op_id)).toBe(2);
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: x, row: { Name: 'X 2' } }] });
    expect((await ops(`?row_id=${x}`)).map((o) => o.op_id)).toEqual([(await ops('?per_page=1'))[0]!.op_id, redo.op_id, undo.op_id, append.op_id]);
    const logged = (await ops('?per_page=100')).find((o) => o.op_id === append.op_id)!;
    expect(rowNames(logged)).toEqual(['X', 'Y']);
    expect((await activities(`?row_id=${y}`)).activities.map((a) => a.op_type)).toEqual(['insert_row', 'delete_row', 'insert_row']);
  });

  it('a deleted row appended again under its id (a live client) is no longer in the trash, and its history is in order', async () => {
    const [row] = await appendRows(g, 'Table1', [{ Name: 'Again' }]);
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [row] });
    expect(((await g.call('GET', 'trash/rows/')).json().rows as Array<{ _id: string }>).map((r) => r._id)).toContain(row);
    t.clock.advance(1000);
    const actor = { user: `${g.owner.virtualId}@auth.local`, app: null };
    await t.container.baseData.rows.appendWithIds(g.base, actor, { table_name: 'Table1', rows: [{ Name: 'Again 2' }] }, [row!]);
    expect(((await g.call('GET', 'trash/rows/')).json().rows as Array<{ _id: string }>).map((r) => r._id)).not.toContain(row);
    expect((await g.call('PUT', `trash/rows/${row}/`, {})).statusCode).toBe(404);
    const history = await ops(`?row_id=${row}`);
    // Both lives: the first append stays in the row's history (found by the creation time its deletion kept).
    expect(history.map((o) => o.op_type)).toEqual(['insert_row', 'delete_row', 'insert_row']);
    expect(history.map((o) => o.op_id)).toEqual([...history.map((o) => o.op_id)].sort((x, y) => y - x));
    expect([history[0]!, history[2]!].map((o) => JSON.stringify(JSON.parse(o.operation)))).toEqual([expect.stringContaining('"Again 2"'), expect.stringContaining('"Again"')]);
    const feed = await activities(`?row_id=${row}`);
    expect(feed.total_count).toBe(3);
    expect(feed.activities.map((a) => a.op_type)).toEqual(['insert_row', 'delete_row', 'insert_row']);
    // Paged one by one, each life's append in its place.
    const paged = [];
    for (let page = 1; page <= 3; page++) paged.push(...(await ops(`?row_id=${row}&per_page=1&page=${page}`)).map((o) => o.op_id));
    expect(paged).toEqual(history.map((o) => o.op_id));
  });

  it('one page of many appends shows each append\'s cells as appended, whatever later writes changed (read for the whole page at once)', async () => {
    const appended: string[][] = [];
    for (let i = 0; i < 12; i++) appended.push(await appendRows(g, 'Table1', [0, 1, 2].map((j) => ({ Name: `a${i}.${j}` }))));
    // Later: one write over a row of every append, single-row updates, a delete, a row updated twice.
    const many = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: appended.map((ids, i) => ({ row_id: ids[0], row: { Name: `m${i}` } })) });
    expect(many.statusCode, many.body).toBe(200);
    for (let i = 0; i < 12; i += 3) await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: appended[i]![1], row: { Name: `s${i}` } }] });
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: appended[5]![0], row: { Name: 'again' } }] });
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [appended[7]![2]] });
    const page = (await ops('?per_page=30')).filter((o) => o.op_type === 'insert_rows').slice(0, 12).reverse();
    expect(page).toHaveLength(12);
    expect(page.map(rowNames)).toEqual(appended.map((_, i) => [0, 1, 2].map((j) => `a${i}.${j}`)));
    const db = (await g.call('GET', 'db-operations/?per_page=30')).json<{ operations: Array<{ op_type: string; operation: string }> }>().operations;
    const text = (o: { operation: unknown }) => ({ operation: typeof o.operation === 'string' ? o.operation : JSON.stringify(o.operation) }) as Op;
    expect(db.filter((o) => o.op_type === 'insert_rows').slice(0, 12).reverse().map((o) => rowNames(text(o)))).toEqual(appended.map((_, i) => [0, 1, 2].map((j) => `a${i}.${j}`)));

    // Then more operations after them than a page reads whole (LATER_READ_MAX, insert-cells.ts): the
    // same page, reached by before_op_id, looks the rows' later changes up in the row index instead.
    const newest = (await ops('?per_page=1'))[0]!.op_id;
    const series =
      dialect === 'postgres'
        ? sql`SELECT g AS n FROM generate_series(1, ${sql.lit(LATER_READ_MAX + 1)}) g`
        : sql`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${sql.lit(LATER_READ_MAX + 1)}) SELECT n FROM s`;
    await sql`INSERT INTO operation_log (base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts)
      SELECT ${g.base.id}, 'seed', 'modify_row', '0000', 'seed@auth.local', NULL, ${t.clock.now()}, 1, '{"o":"modify_row","t":"0000","rows":[]}', NULL
        FROM (${series}) AS q`.execute(t.container.db);
    const deep = (await ops(`?per_page=30&before_op_id=${newest + 1}`)).filter((o) => o.op_type === 'insert_rows').slice(0, 12).reverse();
    expect(deep.map(rowNames)).toEqual(appended.map((_, i) => [0, 1, 2].map((j) => `a${i}.${j}`)));
  });
});
