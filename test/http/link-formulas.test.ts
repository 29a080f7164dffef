import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('link-formula columns (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let linkId: string;
  let linkKey: string;
  let orders: string[];
  let items: string[];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Orders', [{ column_name: 'Name', column_type: 'text' }]);
    await addTable(g, 'Items', [
      { column_name: 'Item', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Ship', column_type: 'date' },
    ]);
    const link = await g.call('POST', 'columns/', { table_name: 'Orders', column_name: 'Lines', column_type: 'link', column_data: { table: 'Orders', other_table: 'Items' } });
    linkId = link.json().data.link_id;
    linkKey = link.json().key;
    orders = await appendRows(g, 'Orders', [{ Name: 'A' }, { Name: 'B' }]);
    items = await appendRows(g, 'Items', [
      { Item: 'pen', Price: 2, Ship: '2024-03-01' },
      { Item: 'ink', Price: 10, Ship: '2024-01-15' },
      { Item: 'pad', Price: 5 },
    ]);
    const linked = await g.call('POST', 'links/', { link_id: linkId, table_name: 'Orders', other_table_name: 'Items', other_rows_ids_map: { [orders[0]!]: items } });
    expect(linked.statusCode).toBe(200);
  });
  afterAll(() => t.close());

  const add = (name: string, data: Record<string, unknown>) => g.call('POST', 'columns/', { table_name: 'Orders', column_name: name, column_type: 'link-formula', column_data: { link_column_key: linkKey, ...data } });
  const orderRows = async () => Object.fromEntries((await listRows(g, 'table_name=Orders&convert_keys=true')).map((r) => [r.Name, r]));

  it('adds lookup, rollup, count_links and findmin/findmax columns computed for every row', async () => {
    const specs: Array<[string, Record<string, unknown>, string]> = [
      ['Prices', { formula: 'lookup', level1_linked_column_key: 'Price' }, 'array'],
      ['Sum', { formula: 'rollup', level1_linked_column_key: 'Price', summary_method: 'sum' }, 'number'],
      ['Avg', { formula: 'rollup', level1_linked_column_key: 'Price', summary_method: 'average' }, 'number'],
      ['Latest', { formula: 'rollup', level1_linked_column_key: 'Ship', summary_method: 'max' }, 'date'],
      ['Names', { formula: 'rollup', level1_linked_column_key: 'Item', summary_method: 'concatenate' }, 'string'],
      ['Count', { formula: 'count_links' }, 'number'],
      ['Cheapest', { formula: 'findmin', comparison_column_key: 'Price', searched_column_key: 'Item' }, 'string'],
      ['Priciest', { formula: 'findmax', comparison_column_key: 'Price', searched_column_key: 'Item' }, 'string'],
    ];
    for (const [name, data, type] of specs) {
      const res = await add(name, data);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ type: 'link-formula', data: { result_type: type, link_column_key: linkKey } });
    }
    const rows = await orderRows();
    expect(rows.A).toMatchObject({ Prices: [2, 10, 5], Sum: 17, Latest: '2024-03-01T00:00:00+00:00', Names: 'pen, ink, pad', Count: 3, Cheapest: 'pen', Priciest: 'ink' });
    expect(rows.A!.Avg).toBeCloseTo(17 / 3);
    expect(rows.B).toMatchObject({ Prices: null, Sum: 0, Count: 0, Cheapest: null, Latest: null });
  });

  it('updates a rollup in the same write that changes a linked row, with a modify event', async () => {
    const res = await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[1], row: { Price: 100 } }] });
    expect(res.statusCode).toBe(200);
    expect((await orderRows()).A).toMatchObject({ Sum: 107, Priciest: 'ink', Prices: [2, 100, 5] });
    const events = await t.container.db.selectFrom('events').select(['op_type', 'row_data']).where('base_id', '=', g.base.id).where('row_id', '=', orders[0]!).orderBy('id').execute();
    const last = events.at(-1)!;
    expect(last.op_type).toBe('modify_row');
    expect(JSON.parse(last.row_data)).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Sum', value: 107, old_value: 17 })]));
  });

  it('recomputes only the link formulas reading the changed cells: an unread cell leaves linking rows alone', async () => {
    expect((await g.call('POST', 'columns/', { table_name: 'Items', column_name: 'Note', column_type: 'text' })).statusCode).toBe(200);
    const eventsOfA = async () => (await t.container.db.selectFrom('events').select(['op_type', 'row_data']).where('base_id', '=', g.base.id).where('row_id', '=', orders[0]!).orderBy('id').execute());
    const before = (await eventsOfA()).length;
    expect((await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[1], row: { Note: 'fragile' } }] })).statusCode).toBe(200);
    expect((await eventsOfA()).length).toBe(before);
    expect((await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[1], row: { Item: 'ink2' } }] })).statusCode).toBe(200);
    const events = await eventsOfA();
    expect(events.length).toBe(before + 1);
    expect(JSON.parse(events.at(-1)!.row_data)).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Names', value: 'pen, ink2, pad' })]));
    expect((await orderRows()).A).toMatchObject({ Names: 'pen, ink2, pad', Priciest: 'ink2', Sum: 107 });
    await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[1], row: { Item: 'ink' } }] });
  });

  it('follows links added and removed, and linked rows deleted', async () => {
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Orders', other_table_name: 'Items', other_rows_ids_map: { [orders[1]!]: [items[2]!] } });
    expect((await orderRows()).B).toMatchObject({ Sum: 5, Count: 1, Cheapest: 'pad' });
    await g.call('DELETE', 'links/', { link_id: linkId, table_name: 'Orders', other_table_name: 'Items', other_rows_ids_map: { [orders[0]!]: [items[0]!] } });
    expect((await orderRows()).A).toMatchObject({ Sum: 105, Count: 2, Cheapest: 'pad' });
    const removed = await g.call('DELETE', 'rows/', { table_name: 'Items', row_ids: [items[2]] });
    expect(removed.statusCode).toBe(200);
    const rows = await orderRows();
    expect(rows.A).toMatchObject({ Sum: 100, Count: 1, Names: 'ink' });
    expect(rows.B).toMatchObject({ Sum: 0, Count: 0, Cheapest: null });
  });

  it('lets formulas read link formulas, recomputed with them', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Orders', column_name: 'Big', column_type: 'formula', column_data: { formula: 'if({Sum} > 50, "big", "small")' } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await orderRows()).A).toMatchObject({ Big: 'big' });
    await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[1], row: { Price: 1 } }] });
    expect((await orderRows()).A).toMatchObject({ Sum: 1, Big: 'small' });
  });

  it('refuses bad link-formula data with a 400', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ formula: 'nope' }, 'column_data.formula invalid: one of lookup, rollup, count_links, findmin, findmax.'],
      [{ formula: 'lookup', link_column_key: 'zzzz', level1_linked_column_key: 'Price' }, 'column_data.link_column_key invalid.'],
      [{ formula: 'lookup', level1_linked_column_key: 'Nope' }, 'column_data.level1_linked_column_key invalid.'],
      [{ formula: 'rollup', level1_linked_column_key: 'Price', summary_method: 'median' }, 'column_data.summary_method invalid: one of sum, average, max, min, count, concatenate.'],
      [{ formula: 'findmax', searched_column_key: 'Item' }, 'column_data.comparison_column_key invalid.'],
    ];
    for (const [data, message] of cases) {
      const res = await add('Bad', data);
      expect(res.statusCode, JSON.stringify(data)).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
  });

  it('follows a linked column being retyped or deleted', async () => {
    const retyped = await g.call('PUT', 'columns/', { table_name: 'Items', column: 'Item', op_type: 'modify_column_type', new_column_type: 'number' });
    expect(retyped.statusCode, retyped.body).toBe(200);
    // 'ink' is no number: the concatenation of the linked Item cells is empty now.
    expect((await orderRows()).A).toMatchObject({ Names: null, Sum: 1 });
    const removed = await g.call('DELETE', 'columns/', { table_name: 'Items', column: 'Price' });
    expect(removed.statusCode).toBe(200);
    expect((await orderRows()).A).toMatchObject({ Sum: null, Prices: null, Count: 1 });
  });

  it('empties link formulas when their link column is deleted', async () => {
    const res = await g.call('DELETE', 'columns/', { table_name: 'Orders', column: 'Lines' });
    expect(res.statusCode).toBe(200);
    expect((await orderRows()).A).toMatchObject({ Sum: null, Count: null });
  });
});
