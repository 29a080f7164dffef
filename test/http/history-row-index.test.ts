import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, appWithGateway, gateway, through, type Gateway } from './rows.fixtures.js';
import { indexPendingRows } from '../../src/modules/history/row-index.js';
import { rowKey } from '../../src/shared/row-key.js';
import type { Db } from '../../src/db/index.js';

type Op = { op_id: number; op_type: string };

/*
 * SQLite logs a single-row change without its row-index entry and writes the entries in batches
 * (src/modules/history/row-index.ts); every reader of the row index writes the missing ones first.
 * PostgreSQL writes them with the change. Either way a row's history, restore conflicts and the row
 * trash see every operation at once.
 */
const entries = async (db: Db, opId: number) => (await db.selectFrom('operation_log_rows').select(['row_key']).where('op_id', '=', opId).execute()).map((e) => Number(e.row_key));
const pendingKey = async (db: Db, opId: number) => {
  const op = await db.selectFrom('operation_log').select('row_key').where('id', '=', opId).executeTakeFirstOrThrow();
  return op.row_key === null ? null : Number(op.row_key);
};
const update = async (g: Gateway, rowId: string, name: string) => {
  const res = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: rowId, row: { Name: name } }] });
  expect(res.statusCode, res.body).toBe(200);
};
const ops = async (g: Gateway, query: string): Promise<Op[]> => {
  const res = await g.call('GET', `operations/${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().operations;
};

describe.each(DIALECTS)('history: the row index of single-row changes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  it('a single-row update is in its row history, its restore conflicts and the trash right after it, before any batch', async () => {
    const db = t.container.db;
    const [row, other] = await appendRows(g, 'Table1', [{ Name: 'a' }, { Name: 'x' }]);
    await update(g, row!, 'b');
    await update(g, row!, 'c');
    const [second, first] = await ops(g, '?per_page=2');
    if (dialect === 'sqlite') {
      // Logged with the row's key and no entry yet.
      expect(await pendingKey(db, first!.op_id)).toBe(rowKey(row!));
      expect(await entries(db, first!.op_id)).toEqual([]);
      expect(await entries(db, second!.op_id)).toEqual([]);
    } else {
      expect(await pendingKey(db, first!.op_id)).toBeNull();
      expect(await entries(db, first!.op_id)).toEqual([rowKey(row!)]);
    }
    // The restore of the first update sees the second (not yet indexed on SQLite) as a conflict.
    const refused = await g.call('PUT', `restore-operations/${first!.op_id}/`);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().conflicts).toEqual([{ op_id: second!.op_id, row_id: row, column_keys: ['0000'] }]);
    // (The refused restore rolled back, the entries it wrote with it.) A history read writes them.
    expect((await ops(g, `?row_id=${row}`)).map((o) => o.op_id)).toEqual([second!.op_id, first!.op_id, expect.any(Number)]);
    expect(await entries(db, first!.op_id)).toEqual([rowKey(row!)]);
    expect(await entries(db, second!.op_id)).toEqual([rowKey(row!)]);

    await update(g, other!, 'y');
    expect((await ops(g, `?row_id=${other}`)).map((o) => o.op_type)).toEqual(['modify_row', 'insert_rows']);
    const history = (await g.call('GET', `activities/?row_id=${row}`)).json<{ activities: Array<{ op_type: string }>; total_count: number }>();
    expect(history.total_count).toBe(3);

    const deleted = await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [other] });
    expect(deleted.statusCode, deleted.body).toBe(200);
    const trash = (await g.call('GET', 'trash/rows/')).json<{ rows: Array<{ _id: string; row_data: Record<string, unknown> }> }>().rows;
    expect(trash.find((r) => r._id === other)?.row_data).toMatchObject({ '0000': 'y' });
  });

  it('the batch step writes each pending entry once, and is a no-op when run again or twice at once', async () => {
    const db = t.container.db;
    const ids = await appendRows(g, 'Table1', [{ Name: 'p' }, { Name: 'q' }, { Name: 'r' }]);
    for (const [i, id] of ids.entries()) await update(g, id, `v${i}`);
    // A write of several rows has its entries at once, on both engines.
    const many = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: ids.map((id) => ({ row_id: id, row: { Name: 'w' } })) });
    expect(many.statusCode, many.body).toBe(200);
    const logged = await ops(g, '?per_page=4');
    expect(await entries(db, logged[0]!.op_id)).toHaveLength(3);
    const [a, b] = await Promise.all([indexPendingRows(db), indexPendingRows(db)]);
    if (dialect === 'sqlite') expect(a + b).toBeGreaterThanOrEqual(4);
    else expect(a + b).toBe(0);
    expect(await indexPendingRows(db)).toBe(0);
    for (const [i, op] of logged.slice(1).reverse().entries()) expect(await entries(db, op.op_id)).toEqual([rowKey(ids[i]!)]);
    const state = await db.selectFrom('operation_log_indexed').select('indexed_to').executeTakeFirstOrThrow();
    if (dialect === 'sqlite') expect(Number(state.indexed_to)).toBe(logged[0]!.op_id);
  });
});

describe.each(DIALECTS)('history: the row index after a restart and with two instances (%s)', (dialect) => {
  const shared = new SharedDatabase(dialect);
  afterAll(() => shared.dispose());

  it('entries left pending by a stopped instance are written by the next, and two instances writing at once miss none', async () => {
    const first = await createTestApp(dialect, {}, { database: await shared.open() });
    const g1 = await gateway(first);
    const [row] = await appendRows(g1, 'Table1', [{ Name: 'a' }]);
    await update(g1, row!, 'b');
    await first.close();

    const second = await createTestApp(dialect, {}, { database: await shared.open() });
    const third = await createTestApp(dialect, {}, { database: await shared.open() });
    try {
      const g2 = through(second, g1);
      const g3 = through(third, g1);
      expect((await ops(g2, `?row_id=${row}`)).map((o) => o.op_type)).toEqual(['modify_row', 'insert_row']);
      // Two instances update and read the same row at once.
      await Promise.all([
        (async () => { for (let i = 0; i < 10; i++) await update(g2, row!, `two ${i}`); })(),
        (async () => { for (let i = 0; i < 10; i++) { await update(g3, row!, `three ${i}`); await ops(g3, `?row_id=${row}&per_page=1`); } })(),
      ]);
      const all = await ops(g2, `?row_id=${row}&per_page=100`);
      expect(all).toHaveLength(22);
      expect(all.filter((o) => o.op_type === 'modify_row')).toHaveLength(21);
      const keyed = await second.container.db.selectFrom('operation_log_rows').select('op_id').where('row_key', '=', rowKey(row!)).execute();
      expect(keyed).toHaveLength(21);
    } finally {
      await second.close();
      await third.close();
    }
  }, 60_000);
});
