import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/modules/events/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, readOnlyToken, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('links (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let linkId: string;
  let authorsId: string;
  let people: string[];
  let books: string[];
  const handed: ChangeEvent[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.container.dispatcher.register({ name: 'links-recorder', handle: async (_trx, events) => void handed.push(...events) });
    g = await gateway(t);
    authorsId = (await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]))._id;
    const column = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Written by', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    linkId = column.json().data.link_id;
    books = await appendRows(g, 'Table1', [{ Name: 'Dune' }, { Name: 'Emma' }, { Name: 'Ubik' }]);
    people = await appendRows(g, 'Authors', [{ Name: 'Herbert' }, { Name: 'Austen' }, { Name: 'Dick' }]);
    await t.container.dispatcher.runOnce();
    handed.length = 0;
  });
  afterAll(() => t.close());

  const drain = async () => {
    await t.container.dispatcher.runOnce();
    return handed.splice(0);
  };
  const linkCells = async (table: string, column: string) =>
    Object.fromEntries((await listRows(g, `table_name=${table}&convert_keys=true`)).map((r) => [r.Name, r[column]]));

  it('creates links by table names (seatable-api) and shows them on both sides', async () => {
    const res = await g.call('POST', 'links/', {
      link_id: linkId,
      table_name: 'Table1',
      other_table_name: 'Authors',
      other_rows_ids_map: { [books[0]!]: [people[0]!], [books[2]!]: [people[2]!, people[0]!] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect(await linkCells('Table1', 'Written by')).toEqual({
      Dune: [{ row_id: people[0], display_value: 'Herbert' }],
      Emma: [],
      Ubik: [
        { row_id: people[2], display_value: 'Dick' },
        { row_id: people[0], display_value: 'Herbert' },
      ],
    });
    expect(await linkCells('Authors', 'Table1')).toEqual({
      Herbert: [
        { row_id: books[0], display_value: 'Dune' },
        { row_id: books[2], display_value: 'Ubik' },
      ],
      Austen: [],
      Dick: [{ row_id: books[2], display_value: 'Ubik' }],
    });
    const got = (await g.call('GET', `rows/${books[0]}/?table_name=Table1&convert_keys=true`)).json();
    expect(got['Written by']).toEqual([{ row_id: people[0], display_value: 'Herbert' }]);
  });

  it('writes add_link events for every row whose link cell changed, on both sides', async () => {
    const events = await drain();
    expect(events.every((e) => e.opType === 'add_link')).toBe(true);
    const byRow = Object.fromEntries(events.map((e) => [e.rowName, e.rowData[0]]));
    expect(Object.keys(byRow).sort()).toEqual(['Dick', 'Dune', 'Herbert', 'Ubik']);
    expect(byRow.Herbert).toMatchObject({ column_name: 'Table1', column_type: 'link', value: [books[0], books[2]], old_value: [] });
    expect(byRow.Ubik).toMatchObject({ column_name: 'Written by', value: [people[2], people[0]], old_value: [] });
  });

  it('accepts the other side as `table` (table ids, as the MCP client sends them) and ignores existing pairs', async () => {
    const res = await g.call('POST', 'links/', { link_id: linkId, table_id: authorsId, other_table_id: '0000', other_rows_ids_map: { [people[1]!]: [books[1]!], [people[0]!]: [books[0]!] } });
    expect(res.statusCode).toBe(200);
    expect((await linkCells('Table1', 'Written by')).Emma).toEqual([{ row_id: people[1], display_value: 'Austen' }]);
    expect((await drain()).map((e) => e.rowName).sort()).toEqual(['Austen', 'Emma']);
  });

  it('replaces a row\'s links with PUT', async () => {
    const res = await g.call('PUT', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [books[2]!]: [people[1]!] } });
    expect(res.statusCode).toBe(200);
    expect((await linkCells('Table1', 'Written by')).Ubik).toEqual([{ row_id: people[1], display_value: 'Austen' }]);
    const cells = await linkCells('Authors', 'Table1');
    expect(cells.Dick).toEqual([]);
    expect(cells.Herbert).toEqual([{ row_id: books[0], display_value: 'Dune' }]);
    const events = await drain();
    expect(Object.fromEntries(events.map((e) => [e.rowName, e.opType]))).toEqual({ Ubik: 'add_link', Herbert: 'remove_link', Dick: 'remove_link', Austen: 'add_link' });
  });

  it('deletes links and counts them', async () => {
    const res = await g.call('DELETE', 'links/', {
      link_id: linkId,
      table_name: 'Table1',
      other_table_name: 'Authors',
      table_row_id: books[0],
      other_rows_ids_map: { [books[0]!]: [people[0]!, people[2]!] },
    });
    expect(res.json()).toEqual({ success: true, deleted_links_count: 1 });
    expect((await linkCells('Table1', 'Written by')).Dune).toEqual([]);
    expect((await drain()).map((e) => [e.rowName, e.opType]).sort()).toEqual([
      ['Dune', 'remove_link'],
      ['Herbert', 'remove_link'],
    ]);
  });

  it('queries links page by page', async () => {
    await g.call('PUT', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [books[0]!]: people } });
    const res = await g.call('POST', 'query-links/', {
      table_name: 'Table1',
      link_column_name: 'Written by',
      rows: [{ row_id: books[0], offset: 1, limit: 5 }, { row_id: books[1] }, { row_id: 'AAAAAAAAAAAAAAAAAAAAAA' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      [books[0]!]: [
        { row_id: people[1], display_value: 'Austen' },
        { row_id: people[2], display_value: 'Dick' },
      ],
      [books[1]!]: [{ row_id: people[1], display_value: 'Austen' }],
      AAAAAAAAAAAAAAAAAAAAAA: [],
    });
    const bad = await g.call('POST', 'query-links/', { table_name: 'Table1', link_column_name: 'Name', rows: [] });
    expect(bad.json()).toEqual({ error_msg: 'column Name is not a link column.' });
    expect((await g.call('POST', 'query-links/', { table_name: 'Table1', link_column_name: 'Written by', rows: [{ offset: 1 }] })).statusCode).toBe(400);
  });

  it('refuses bad link requests and writes nothing', async () => {
    await drain();
    const base = { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors' };
    const cases: Array<[unknown, number, string]> = [
      [{ ...base, link_id: 'zzzz', other_rows_ids_map: {} }, 404, 'link zzzz not found'],
      [{ ...base, other_table_name: 'Table1', other_rows_ids_map: {} }, 400, 'table and other table do not belong to this link.'],
      [{ ...base, other_rows_ids_map: { [books[1]!]: ['AAAAAAAAAAAAAAAAAAAAAA'] } }, 404, 'row AAAAAAAAAAAAAAAAAAAAAA not found'],
      [{ ...base, other_rows_ids_map: { [people[0]!]: [books[1]!] } }, 404, `row ${people[0]} not found`],
      [{ ...base, other_rows_ids_map: { [books[1]!]: 'x' } }, 400, 'other_rows_ids_map invalid.'],
      [{ ...base }, 400, 'other_rows_ids_map invalid.'],
      [{ ...base, link_id: 5, other_rows_ids_map: {} }, 400, 'link_id invalid.'],
    ];
    for (const [body, status, message] of cases) {
      const res = await g.call('POST', 'links/', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json()).toEqual({ error_msg: message });
    }
    expect(await drain()).toEqual([]);
  });

  it('forgets the links of deleted rows', async () => {
    await g.call('DELETE', 'rows/', { table_name: 'Authors', row_ids: [people[1]] });
    expect((await linkCells('Table1', 'Written by')).Emma).toEqual([]);
    const left = await t.container.db.selectFrom('base_links').select('other_row_id').where('base_id', '=', g.base.id).execute();
    expect(left.map((l) => l.other_row_id)).not.toContain(people[1]);
  });

  it('supports links within one table', async () => {
    const column = await g.call('POST', 'columns/', { table_name: 'Authors', column_name: 'Influenced', column_type: 'link', column_data: { table: 'Authors', other_table: 'Authors' } });
    const selfLink = column.json().data.link_id;
    const cols = (await g.call('GET', 'columns/?table_name=Authors')).json().columns.filter((c: { type: string }) => c.type === 'link');
    expect(cols).toHaveLength(2); // the Table1 twin and the self link, no second twin
    await g.call('POST', 'links/', { link_id: selfLink, table_name: 'Authors', other_table_name: 'Authors', other_rows_ids_map: { [people[0]!]: [people[2]!] } });
    const cells = await linkCells('Authors', 'Influenced');
    expect(cells.Herbert).toEqual([{ row_id: people[2], display_value: 'Dick' }]);
    expect(cells.Dick).toEqual([]);
  });

  it('refuses link writes with a read-only token', async () => {
    const token = await readOnlyToken(g);
    expect((await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: {} }, token)).statusCode).toBe(403);
    expect((await g.call('POST', 'query-links/', { table_name: 'Table1', link_column_name: 'Written by', rows: [] }, token)).statusCode).toBe(200);
  });
});
