import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, gateway, type Gateway, listRows } from './rows.fixtures.js';

type Column = { key: string; name: string; type: string; data: Record<string, unknown> | null };

describe.each(DIALECTS)('formula columns (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let ids: string[];

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    g = await gateway(t);
    await addTable(g, 'Orders', [
      { column_name: 'Item', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Qty', column_type: 'number' },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Paid', column_type: 'checkbox' },
    ]);
    ids = await appendRows(g, 'Orders', [
      { Item: 'pen', Price: 2.5, Qty: 4, Due: '2024-01-31' },
      { Item: 'ink', Price: 10, Due: '2024-02-29', Paid: true },
    ]);
  });
  afterAll(() => t.close());

  const addColumn = (name: string, formula: string) => g.call('POST', 'columns/', { table_name: 'Orders', column_name: name, column_type: 'formula', column_data: { formula } });
  const byName = async () => Object.fromEntries((await listRows(g, 'table_name=Orders&convert_keys=true')).map((r) => [r.Item, r]));

  it('adds formula columns, reporting the inferred result type, and computes them for existing rows', async () => {
    const total = await addColumn('Total', '{Price} * {Qty}');
    expect(total.statusCode).toBe(200);
    expect(total.json()).toMatchObject({ name: 'Total', type: 'formula', data: { formula: '{Price} * {Qty}', result_type: 'number' } });
    const cases: Array<[string, string, string]> = [
      ['Label', 'upper({Item}) & " x" & {Qty}', 'string'],
      ['Month end', 'eomonth({Due}, 1)', 'date'],
      ['Settled', 'and({Paid}, {Total} > 5)', 'bool'],
    ];
    for (const [name, formula, type] of cases) {
      const res = await addColumn(name, formula);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.result_type).toBe(type);
    }
    const rows = await byName();
    expect(rows.pen).toMatchObject({ Total: 10, Label: 'PEN x4', 'Month end': '2024-02-29T00:00:00+01:00', Settled: false });
    expect(rows.ink).toMatchObject({ Total: 0, Label: 'INK x', 'Month end': '2024-03-31T00:00:00+01:00', Settled: false });
  });

  it('recomputes a row’s formulas (and formulas reading formulas) in the write that changes its cells', async () => {
    const res = await g.call('PUT', 'rows/', { table_name: 'Orders', updates: [{ row_id: ids[1], row: { Qty: 3 } }] });
    expect(res.statusCode).toBe(200);
    expect((await byName()).ink).toMatchObject({ Total: 30, Label: 'INK x3', Settled: true });
    const appended = await appendRows(g, 'Orders', [{ Item: 'cap', Price: 1, Qty: 2, Total: 999 }]);
    const row = (await g.call('GET', `rows/${appended[0]}/?table_name=Orders&convert_keys=true`)).json();
    // A formula cell cannot be written: the computed value wins.
    expect(row).toMatchObject({ Total: 2, Label: 'CAP x2', 'Month end': null });
  });

  it('shows formula values in SQL results, the whole-base read and the change events webhooks carry', async () => {
    const sql = await g.call('POST', 'sql/', { sql: "SELECT Item, Total, Settled FROM Orders WHERE Total > 5 ORDER BY Total", convert_keys: true });
    expect(sql.statusCode, sql.body).toBe(200);
    expect(sql.json().results.map((r: Record<string, unknown>) => [r.Item, r.Total, r.Settled])).toEqual([
      ['pen', 10, false],
      ['ink', 30, true],
    ]);
    const whole = (await g.call('GET', '')).json();
    const orders = whole.tables.find((tb: { name: string }) => tb.name === 'Orders');
    const totalKey = orders.columns.find((c: Column) => c.name === 'Total').key;
    expect(orders.rows.map((r: Record<string, unknown>) => r[totalKey]).sort()).toEqual([10, 2, 30]);
    const events = await t.container.db.selectFrom('events').select(['op_type', 'row_data', 'row_id']).where('base_id', '=', g.base.id).where('row_id', '=', ids[1]!).orderBy('id').execute();
    const modified = events.filter((e) => e.op_type === 'modify_row').at(-1)!;
    expect(JSON.stringify(JSON.parse(modified.row_data))).toContain(`"${totalKey}"`);
    expect(modified.row_data).toMatch(/30/);
  });

  it('refuses a bad formula with a 400 naming the position, and changes nothing', async () => {
    const before = (await g.call('GET', 'columns/?table_name=Orders')).json().columns.length;
    const cases: Array<[string, string]> = [
      ['{Price} * ', 'Formula error at position 11: unexpected end of formula.'],
      ['{Price} + {Nope}', 'Formula error at position 11: column Nope not found.'],
      ['round({Price}, 1, 2)', 'Formula error at position 1: function round takes 1 to 2 arguments, not 3.'],
      ['sqrtt({Price})', 'Formula error at position 1: unknown function sqrtt.'],
      ['', 'column_data.formula invalid.'],
    ];
    for (const [formula, message] of cases) {
      const res = await addColumn('Bad', formula);
      expect(res.statusCode, formula).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
    expect((await g.call('GET', 'columns/?table_name=Orders')).json().columns.length).toBe(before);
    const cyc = await g.call('PUT', 'columns/', { table_name: 'Orders', column: 'Total', op_type: 'modify_column_type', new_column_type: 'formula', column_data: { formula: '{Settled} + 1' } });
    expect(cyc.statusCode).toBe(400);
    expect(cyc.json().error_msg).toMatch(/cycle/);
    expect((await byName()).pen).toMatchObject({ Total: 10 });
  });

  it('follows renames, formula changes and deletions of the columns formulas read', async () => {
    const renamed = await g.call('PUT', 'columns/', { table_name: 'Orders', column: 'Qty', op_type: 'rename_column', new_column_name: 'Count' });
    expect(renamed.statusCode).toBe(200);
    const columns: Column[] = (await g.call('GET', 'columns/?table_name=Orders')).json().columns;
    expect(columns.find((c) => c.name === 'Total')!.data!.formula).toBe('{Price} * {Count}');
    const changed = await g.call('PUT', 'columns/', { table_name: 'Orders', column: 'Total', op_type: 'modify_column_type', new_column_type: 'formula', column_data: { formula: '{Price} + {Count}' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await byName()).pen).toMatchObject({ Total: 6.5, Settled: false });
    const removed = await g.call('DELETE', 'columns/', { table_name: 'Orders', column: 'Count' });
    expect(removed.statusCode).toBe(200);
    // The formula no longer compiles: its cells are empty, and formulas reading it follow.
    expect((await byName()).pen).toMatchObject({ Total: null, Label: null });
  });

  it('creates a table whose first column is a formula naming a later column', async () => {
    const table = await addTable(g, 'People', [
      { column_name: 'Full name', column_type: 'formula', column_data: { formula: 'concatenate({First}, " ", {Last})' } },
      { column_name: 'First', column_type: 'text' },
      { column_name: 'Last', column_type: 'text' },
    ]);
    expect(table.columns[0]).toMatchObject({ type: 'formula', data: { result_type: 'string' } });
    await appendRows(g, 'People', [{ First: 'Ada', Last: 'Lovelace' }]);
    expect((await listRows(g, 'table_name=People&convert_keys=true'))[0]).toMatchObject({ 'Full name': 'Ada Lovelace' });
    const batch = await g.call('POST', 'batch-append-columns/', { table_name: 'People', columns: [{ column_name: 'F', column_type: 'formula', column_data: { formula: '1' } }] });
    expect(batch.statusCode).toBe(400);
  });
});

describe.each(DIALECTS)('filters and sorts on formula columns (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Task', column_type: 'text' },
      { column_name: 'Hours', column_type: 'number' },
      { column_name: 'Start', column_type: 'date' },
      { column_name: 'Cost', column_type: 'formula', column_data: { formula: '{Hours} * 10' } },
      { column_name: 'End', column_type: 'formula', column_data: { formula: 'dateAdd({Start}, {Hours}, "days")' } },
      { column_name: 'Long', column_type: 'formula', column_data: { formula: '{Hours} >= 5' } },
      { column_name: 'Code', column_type: 'formula', column_data: { formula: 'upper(left({Task}, 2))' } },
    ]);
    await appendRows(g, 'Tasks', [
      { Task: 'write', Hours: 5, Start: '2024-01-30' },
      { Task: 'test', Hours: 1, Start: '2024-02-28' },
      { Task: 'ship', Hours: 12, Start: '2024-01-01' },
      { Task: 'idle' },
    ]);
  });
  afterAll(() => t.close());

  const view = async (name: string, settings: Record<string, unknown>) => {
    expect((await g.call('POST', 'views/?table_name=Tasks', { name })).statusCode).toBe(200);
    const res = await g.call('PUT', `views/${name}/?table_name=Tasks`, settings);
    expect(res.statusCode, res.body).toBe(200);
    return (await listRows(g, `table_name=Tasks&view_name=${name}&convert_keys=true`)).map((r) => r.Task);
  };

  it('filters views by number, date, bool and text formulas', async () => {
    expect(await view('Pricey', { filters: [{ column_name: 'Cost', filter_predicate: 'greater', filter_term: 20 }] })).toEqual(['write', 'ship']);
    expect(await view('Late', { filters: [{ column_name: 'End', filter_predicate: 'is_on_or_after', filter_term: '2024-02-04', filter_term_modifier: 'exact_date' }] })).toEqual(['write', 'test']);
    expect(await view('Long', { filters: [{ column_name: 'Long', filter_predicate: 'is', filter_term: true }] })).toEqual(['write', 'ship']);
    expect(await view('Codes', { filters: [{ column_name: 'Code', filter_predicate: 'is', filter_term: 'TE' }] })).toEqual(['test']);
  });

  it('sorts by number, date and text formula columns, empty cells last', async () => {
    const sorted = async (column: string, direction = 'asc') =>
      (await listRows(g, `table_name=Tasks&order_by=${column}&direction=${direction}&convert_keys=true`)).map((r) => r.Task);
    // An empty cell counts as 0 in arithmetic: idle costs 0.
    expect(await sorted('Cost')).toEqual(['idle', 'test', 'write', 'ship']);
    expect(await sorted('Cost', 'desc')).toEqual(['ship', 'write', 'test', 'idle']);
    expect(await sorted('End')).toEqual(['ship', 'write', 'test', 'idle']);
    expect(await sorted('Code', 'desc')).toEqual(['write', 'test', 'ship', 'idle']);
  });
});

describe.each(DIALECTS)('formula columns of a duplicated table (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  it('copies formula columns and computes them for the copied rows', async () => {
    await addTable(g, 'Src', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Shout', column_type: 'formula', column_data: { formula: 'upper({Name}) & "!"' } },
    ]);
    await appendRows(g, 'Src', [{ Name: 'hey' }]);
    const res = await g.call('POST', 'tables/duplicate-table/', { table_name: 'Src', is_duplicate_records: true });
    expect(res.statusCode, res.body).toBe(200);
    const copied = await listRows(g, 'table_name=Src(copy)&convert_keys=true');
    expect(copied.map((r) => r.Shout)).toEqual(['HEY!']);
  });
});
