import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_WRITE_SLOTS } from '../../src/modules/rows/write-slots.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { eventCount, gateway, listRows, storedRowCount, type Gateway } from './rows.fixtures.js';

/** Issue 19 item 4: appends take the base's lock late, and writes never hold the whole pool. */
describe.each(DIALECTS)('short write locks (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const res = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'No', column_type: 'auto-number' });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => t.close());

  it('a burst of single-row appends to one base: every row and event once, auto-numbers distinct, a connection kept for the workers', async () => {
    const writes = 40;
    const burst = Promise.all(Array.from({ length: writes }, (_, i) => g.call('POST', 'rows/', { table_name: 'Table1', row: { Name: `r${i}` } })));
    // The dispatcher (a worker) runs during the burst and finishes.
    const dispatched = t.container.dispatcher.runOnce();
    for (const res of await burst) expect(res.statusCode, res.body).toBe(200);
    expect((await dispatched).failed).toEqual([]);
    expect(await storedRowCount(g)).toBe(writes);
    expect(await eventCount(g)).toBe(writes);
    const rows = await listRows(g, 'table_name=Table1&limit=1000&convert_keys=true');
    const numbers = rows.map((r) => r.No);
    expect(new Set(numbers).size).toBe(writes);
    const slots = t.container.baseData.writer.slots;
    if (dialect === 'postgres') {
      // Never more write transactions than the slots, and the slots leave part of the pool (10) free.
      // (Appends to one base mostly share a statement now — the group commit — so fewer slots are used.)
      expect(slots.maxActive).toBeGreaterThan(0);
      expect(slots.maxActive).toBeLessThanOrEqual(POSTGRES_WRITE_SLOTS);
      expect(POSTGRES_WRITE_SLOTS).toBeLessThan(10);
    }
  });

  it('an append racing a structure change of the same base is redone under the lock (no row in a deleted column)', async () => {
    const add = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Gone', column_type: 'text' });
    expect(add.statusCode, add.body).toBe(200);
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Name: `x${i}`, Gone: 'v' }] })),
      g.call('DELETE', 'columns/', { table_name: 'Table1', column: 'Gone' }),
    ]);
    for (const res of results) expect(res.statusCode, res.body).toBe(200);
    const rows = await listRows(g, 'table_name=Table1&limit=1000&convert_keys=true');
    expect(rows.every((r) => !('Gone' in r))).toBe(true);
    const stored = await t.container.db.selectFrom('base_rows').select('data').where('base_id', '=', g.base.id).execute();
    const key = add.json<{ key: string }>().key;
    const leftovers = stored.filter((r) => key in (typeof r.data === 'string' ? JSON.parse(r.data) : r.data));
    // Rows committed before the delete lost the cell with it; those after never had the column.
    expect(leftovers).toEqual([]);
  });
});
