import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, type Gateway, listRows } from './rows.fixtures.js';

/** Links of a table that links to itself (one link column, on the `row_id` end) come back in full. */
describe.each(DIALECTS)('history: a self-linked table restores all its links (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  /** A new self-linked table `name` with rows A–E: A→B, A→C, C→B, B→D, B→B, E→A. */
  async function tasks(name: string) {
    await addTable(g, name, [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: name, column_name: 'Blocks', column_type: 'link', column_data: { table: name, other_table: name } });
    expect(column.statusCode, column.body).toBe(200);
    const linkId = column.json().data.link_id as string;
    const [a, b, c, d, e] = await appendRows(g, name, ['A', 'B', 'C', 'D', 'E'].map((n) => ({ Name: n })));
    const map = { [a!]: [b!, c!], [c!]: [b!], [b!]: [d!, b!], [e!]: [a!] };
    const linked = await g.call('POST', 'links/', { link_id: linkId, table_name: name, other_table_name: name, other_rows_ids_map: map });
    expect(linked.statusCode, linked.body).toBe(200);
    return { a: a!, b: b!, c: c!, d: d!, e: e! };
  }

  /** Every row's link cell, by row name, as sorted linked names. */
  async function links(name: string): Promise<Record<string, string[]>> {
    const rows = await listRows(g, `table_name=${name}&convert_keys=true`);
    const names = new Map(rows.map((r) => [r._id as string, r.Name as string]));
    return Object.fromEntries(
      rows.map((r) => [r.Name, ((r.Blocks ?? []) as Array<{ row_id: string }>).map((l) => names.get(l.row_id) ?? `missing ${l.row_id}`).sort()]),
    );
  }

  const FULL = { A: ['B', 'C'], B: ['B', 'D'], C: ['B'], D: [], E: ['A'] };
  const latestOp = async () => (await g.call('GET', 'operations/?per_page=1')).json().operations[0] as { op_id: number; op_type: string };

  it('a row deleted and restored from the row trash is linked again from the rows that linked to it', async () => {
    const { b } = await tasks('Tasks1');
    expect(await links('Tasks1')).toEqual(FULL);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Tasks1', row_ids: [b] })).statusCode).toBe(200);
    expect(await links('Tasks1')).toEqual({ A: ['C'], C: [], D: [], E: ['A'] });
    const restored = await g.call('PUT', `trash/rows/${b}/`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    expect(await links('Tasks1')).toEqual(FULL);
  });

  it('rows linking to each other, deleted together, come back with every link through restore-operations', async () => {
    const { a, b } = await tasks('Tasks2');
    expect((await g.call('DELETE', 'rows/', { table_name: 'Tasks2', row_ids: [a, b] })).statusCode).toBe(200);
    const del = await latestOp();
    expect(del.op_type).toBe('delete_rows');
    expect(await links('Tasks2')).toEqual({ C: [], D: [], E: [] });
    const restored = await g.call('PUT', `restore-operations/${del.op_id}/`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    expect(await links('Tasks2')).toEqual(FULL);
  });

  it('a deleted self-linked table comes back from the table trash with every link', async () => {
    await tasks('Tasks3');
    expect((await g.call('DELETE', 'tables/', { table_name: 'Tasks3' })).statusCode).toBe(200);
    const trashed = (await g.call('GET', 'trash/tables/')).json().tables as Array<{ id: number; table_name: string; row_count: number }>;
    const entry = trashed.find((x) => x.table_name === 'Tasks3')!;
    expect(entry.row_count).toBe(5);
    const restored = await g.call('PUT', `trash/tables/${entry.id}/`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    expect(await links('Tasks3')).toEqual(FULL);
  });
});
