import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, type Gateway } from './rows.fixtures.js';

/**
 * A trashed table's rows stay stored under its id (rows/kept-tables.ts) but are no row of the base:
 * every row-level route answers for them as for a missing row, and changes nothing.
 */
describe.each(DIALECTS)('rows of a trashed table (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  it('refuses comments, reads, links, locks and row restores for a row of a trashed table', async () => {
    await addTable(g, 'Gone', [{ column_name: 'Name', column_type: 'text' }]);
    await addTable(g, 'Peers', [{ column_name: 'Name', column_type: 'text' }]);
    const link = await g.call('POST', 'columns/', { table_name: 'Gone', column_name: 'Peer', column_type: 'link', column_data: { table: 'Gone', other_table: 'Peers' } });
    const linkId = link.json().data.link_id as string;
    const [kept, deleted] = await appendRows(g, 'Gone', [{ Name: 'kept' }, { Name: 'deleted first' }]);
    const [peer] = await appendRows(g, 'Peers', [{ Name: 'peer' }]);
    const meta = (await g.call('GET', 'metadata/')).json().metadata as { tables: Array<{ _id: string; name: string }> };
    const goneId = meta.tables.find((x) => x.name === 'Gone')!._id;
    expect((await g.call('POST', 'comments/', { table_id: goneId, row_id: kept, comment: 'before' })).statusCode).toBe(200);
    // A row deleted before its table: in the row trash, restorable while the table lives.
    expect((await g.call('DELETE', 'rows/', { table_name: 'Gone', row_ids: [deleted] })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Gone' })).statusCode).toBe(200);
    const comments = async () => (await g.call('GET', `comments/?row_id=${kept}`)).json() as unknown[];
    expect(await comments()).toHaveLength(1);

    const comment = await g.call('POST', 'comments/', { table_id: goneId, row_id: kept, comment: 'on a trashed table' });
    expect(comment.statusCode, comment.body).toBe(404);
    expect(comment.json()).toEqual({ error_msg: 'row not found.' });
    expect(await comments()).toHaveLength(1);

    for (const url of [`rows/${kept}/?table_name=Gone`, `rows/${kept}/?table_id=${goneId}`]) expect((await g.call('GET', url)).statusCode).toBe(404);
    const linked = await g.call('POST', 'links/', { link_id: linkId, table_name: 'Gone', other_table_name: 'Peers', other_rows_ids_map: { [kept!]: [peer!] } });
    expect(linked.statusCode).toBeGreaterThanOrEqual(400);
    expect(linked.statusCode).toBeLessThan(500);
    const queried = await g.call('POST', 'query-links/', { table_id: goneId, link_column_key: 'Peer', rows: [{ row_id: kept, limit: 10, offset: 0 }] });
    expect(queried.statusCode).toBeGreaterThanOrEqual(400);
    expect(queried.statusCode).toBeLessThan(500);
    expect((await g.call('PUT', 'lock-rows/', { table_name: 'Gone', row_ids: [kept] })).statusCode).toBe(404);
    const updated = await g.call('PUT', 'rows/', { table_name: 'Gone', updates: [{ row_id: kept, row: { Name: 'x' } }] });
    expect(updated.statusCode).toBe(404);

    // The row trash does not put a row into a trashed table.
    const trashRows = async () => ((await g.call('GET', 'trash/rows/')).json().rows as Array<{ _id: string }>).map((r) => r._id);
    expect(await trashRows()).not.toContain(deleted);
    const restored = await g.call('PUT', `trash/rows/${deleted}/`, {});
    expect(restored.statusCode).toBe(404);
    const stored = await t.container.db.selectFrom('base_rows').select('row_id').where('base_id', '=', g.base.id).where('table_id', '=', goneId).execute();
    expect(stored.map((r) => r.row_id)).toEqual([kept]);
    const links = await t.container.db.selectFrom('base_links').select('id').where('base_id', '=', g.base.id).where('link_id', '=', linkId).execute();
    expect(links).toHaveLength(0);

    // Restored from the table trash, the row takes comments again.
    const [entry] = (await g.call('GET', 'trash/tables/')).json().tables as Array<{ id: number }>;
    expect((await g.call('PUT', `trash/tables/${entry!.id}/`, {})).statusCode).toBe(200);
    expect((await g.call('POST', 'comments/', { table_id: goneId, row_id: kept, comment: 'back' })).statusCode).toBe(200);
    expect(await comments()).toHaveLength(2);
    // ... and the row deleted before it is in the row trash again.
    expect(await trashRows()).toContain(deleted);
    expect((await g.call('PUT', `trash/rows/${deleted}/`, {})).statusCode).toBe(200);
    expect((await g.call('GET', `rows/${deleted}/?table_name=Gone`)).statusCode).toBe(200);
  });
});
