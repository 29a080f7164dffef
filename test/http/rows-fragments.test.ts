import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, readOnlyToken, through, type Gateway } from './rows.fixtures.js';

type Row = Record<string, unknown>;

/**
 * Presented rows are kept under their stored text (row-fragments.ts) and the metadata is parsed once
 * per version for reads (read-metadata.ts): with both warm on two instances of one database, every
 * write through either instance shows on the very next read through the other (PostgreSQL: at once;
 * SQLite: after 1 ms), including writes that change how unchanged rows are presented (a column
 * renamed, retyped, hidden) and writes to the rows a link cell shows.
 */
describe.each(DIALECTS)('row fragments and the metadata read cache across instances (%s)', (dialect) => {
  let shared: SharedDatabase;
  let first: TestApp;
  let second: TestApp;
  let here: Gateway;
  let there: Gateway;
  const settle = () => (dialect === 'sqlite' ? new Promise((resolve) => setTimeout(resolve, 2)) : Promise.resolve());
  const list = async (g: Gateway, query = 'table_name=Items&convert_keys=true') => {
    const res = await g.call('GET', `rows/?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Row[] }>().rows;
  };
  const filtered = async (g: Gateway, filters: unknown[] = []) => {
    const res = await g.call('POST', 'filtered-rows/?table_name=Items', { filters });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Row[] }>().rows;
  };
  const whole = async (g: Gateway) => {
    const res = await g.call('GET', '');
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ tables: Array<{ name: string; columns: Array<{ key: string; name: string }>; rows: Row[] }> }>().tables.find((t) => t.name === 'Items')!;
  };
  /** Every read path through both instances (fragments and metadata warm on both). */
  const readAll = async () => {
    for (const g of [here, there]) {
      await list(g);
      await filtered(g);
      await whole(g);
    }
  };
  let ids: string[];

  beforeAll(async () => {
    shared = new SharedDatabase(dialect);
    first = await createTestApp(dialect, {}, { database: await shared.open() });
    second = await createTestApp(dialect, {}, { database: await shared.open(), clock: first.clock });
    here = await gateway(first);
    there = through(second, here);
    await addTable(here, 'Tags', [{ column_name: 'Label', column_type: 'text' }]);
    await addTable(here, 'Items', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Amount', column_type: 'number' },
      { column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
    ]);
    ids = await appendRows(here, 'Items', [
      { Name: 'a', Amount: 1, Due: '2030-06-20 09:30' },
      { Name: 'b', Amount: 2 },
    ]);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await shared?.dispose();
  });

  it('shows a one-cell write through the other instance on the next read of every kind', async () => {
    for (let i = 1; i <= 4; i++) {
      await readAll();
      const [writer, reader] = i % 2 ? [there, here] : [here, there];
      const res = await writer.call('PUT', 'rows/', { table_name: 'Items', row_id: ids[0], row: { Name: `a${i}` } });
      expect(res.statusCode, res.body).toBe(200);
      await settle();
      expect((await list(reader)).map((r) => r.Name)).toEqual([`a${i}`, 'b']);
      expect((await filtered(reader)).map((r) => r.Name)).toEqual([`a${i}`, 'b']);
      const table = await whole(reader);
      const nameKey = table.columns.find((c) => c.name === 'Name')!.key;
      expect(table.rows.map((r) => r[nameKey])).toEqual([`a${i}`, 'b']);
    }
  });

  it('shows a renamed, retyped or hidden column at once, though the rows did not change', async () => {
    await readAll();
    let res = await there.call('PUT', 'columns/', { table_name: 'Items', op_type: 'rename_column', column: 'Amount', new_column_name: 'Total' });
    expect(res.statusCode, res.body).toBe(200);
    await settle();
    expect(await list(here)).toEqual([expect.objectContaining({ Total: 1 }), expect.objectContaining({ Total: 2 })]);
    expect((await list(here))[0]).not.toHaveProperty('Amount');
    expect((await whole(here)).columns.map((c) => c.name)).toContain('Total');

    await readAll();
    res = await here.call('PUT', 'columns/', { table_name: 'Items', op_type: 'modify_column_type', column: 'Due', new_column_type: 'text' });
    expect(res.statusCode, res.body).toBe(200);
    await settle();
    const retyped = (await list(there))[0]!.Due;
    expect(typeof retyped).toBe('string');
    expect(retyped).not.toMatch(/\+0[12]:00$/); // a text cell, no longer a date presented in TIME_ZONE

    await readAll();
    res = await there.call('POST', 'views/?table_name=Items', { name: 'Narrow', type: 'table' });
    expect(res.statusCode, res.body).toBe(200);
    expect((await list(here, 'table_name=Items&view_name=Narrow&convert_keys=true'))[0]).toHaveProperty('Total');
    const nameKeys = (await whole(here)).columns;
    res = await there.call('PUT', 'views/Narrow/?table_name=Items', { hidden_columns: [nameKeys.find((c) => c.name === 'Total')!.key] });
    expect(res.statusCode, res.body).toBe(200);
    await settle();
    const narrow = (await list(here, 'table_name=Items&view_name=Narrow&convert_keys=true'))[0]!;
    expect(narrow).not.toHaveProperty('Total');
    expect(narrow).toHaveProperty('Name');
    expect((await list(here))[0]).toHaveProperty('Total', 1);
  });

  it("shows a change of a linked row's display cell in the link cells at once", async () => {
    const [tag] = await appendRows(here, 'Tags', [{ Label: 'red' }]);
    let res = await here.call('POST', 'columns/', { table_name: 'Items', column_name: 'Tag', column_type: 'link', column_data: { table: 'Items', other_table: 'Tags' } });
    expect(res.statusCode, res.body).toBe(200);
    const linkId = res.json<{ data: { link_id: string } }>().data.link_id;
    res = await there.call('POST', 'links/', { link_id: linkId, table_name: 'Items', other_table_name: 'Tags', other_rows_ids_map: { [ids[0]!]: [tag] } });
    expect(res.statusCode, res.body).toBe(200);
    await settle();
    expect((await list(here))[0]!.Tag).toEqual([{ row_id: tag, display_value: 'red' }]);
    expect((await list(here))[1]!.Tag).toEqual([]);
    await readAll();
    res = await there.call('PUT', 'rows/', { table_name: 'Tags', row_id: tag, row: { Label: 'blue' } });
    expect(res.statusCode, res.body).toBe(200);
    await settle();
    expect((await list(here))[0]!.Tag).toEqual([{ row_id: tag, display_value: 'blue' }]);
    expect((await filtered(here))[0]!.Tag).toEqual([{ row_id: tag, display_value: 'blue' }]);
  });

  it("keeps per-user answers per user while the users' rows share fragments", async () => {
    const own = await gateway(first);
    await addTable(own, 'People', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'By', column_type: 'creator' },
      { column_name: 'Who', column_type: 'collaborator' },
    ]);
    await appendRows(own, 'People', [{ Name: 'mine', Who: [own.owner.email] }]);
    const reader = await readOnlyToken(own);
    const other = through(second, own);
    const mine = { filters: [{ column_name: 'By', filter_predicate: 'include_me' }] };
    for (let i = 0; i < 2; i++) {
      const asOwner = (await own.call('POST', 'filtered-rows/?table_name=People', mine)).json<{ rows: Row[] }>().rows;
      const asReader = (await other.call('POST', 'filtered-rows/?table_name=People', mine, reader)).json<{ rows: Row[] }>().rows;
      expect(asOwner.map((r) => r.Name)).toEqual(['mine']);
      expect(asReader).toEqual([]);
      // Every user reading the unfiltered table sees the same cells (nothing in a cell is per user).
      const all = (await other.call('GET', 'rows/?table_name=People&convert_keys=true', undefined, reader)).json<{ rows: Row[] }>().rows;
      expect(all).toEqual(asOwner);
    }
  });
});
