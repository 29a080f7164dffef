import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/modules/events/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { gateway, listRows, storedRowCount, eventCount, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('concurrent writers (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let other: Gateway;
  const handed: ChangeEvent[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.container.dispatcher.register({ name: 'concurrency-recorder', handle: async (_trx, events) => void handed.push(...events) });
    g = await gateway(t);
    other = await gateway(t);
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Tag', column_type: 'single-select' });
  });
  afterAll(() => t.close());

  it('loses no row, no event and no new select option; a dispatcher running alongside sees every event once', async () => {
    const writers = 12;
    const perCall = 25;
    let dispatching = true;
    const dispatcher = (async () => {
      while (dispatching) {
        await t.container.dispatcher.runOnce();
        await new Promise((resolve) => setImmediate(resolve)); // let the writers' I/O run
      }
    })();
    const calls = Array.from({ length: writers }, (_, w) => [
      g.call('POST', 'rows/', { table_name: 'Table1', rows: Array.from({ length: perCall }, (_, i) => ({ Name: `w${w}-${i}`, Tag: `tag-${w}` })) }),
      other.call('POST', 'rows/', { table_name: 'Table1', rows: Array.from({ length: perCall }, (_, i) => ({ Name: `o${w}-${i}` })) }),
    ]).flat();
    const results = await Promise.all(calls);
    for (const res of results) expect(res.statusCode, res.body).toBe(200);
    dispatching = false;
    await dispatcher;
    await t.container.dispatcher.runOnce();

    expect(await storedRowCount(g)).toBe(writers * perCall);
    expect(await storedRowCount(other)).toBe(writers * perCall);
    expect(await eventCount(g)).toBe(writers * perCall);
    const options = (await g.call('GET', 'columns/?table_name=Table1')).json().columns.find((c: { name: string }) => c.name === 'Tag').data.options;
    expect(options.map((o: { name: string }) => o.name).sort()).toEqual(Array.from({ length: writers }, (_, w) => `tag-${w}`).sort());

    const ids = handed.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(handed.filter((e) => e.baseId === g.base.id)).toHaveLength(writers * perCall);
    expect(handed.filter((e) => e.baseId === other.base.id)).toHaveLength(writers * perCall);
  });

  it('applies concurrent updates of the same row one after the other', async () => {
    const [row] = await listRows(g, 'table_name=Table1&limit=1');
    const id = row!._id as string;
    const updates = Array.from({ length: 10 }, (_, i) =>
      g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: id, row: { Name: `v${i}`, Tag: `late-${i}` } }] }),
    );
    for (const res of await Promise.all(updates)) expect(res.statusCode).toBe(200);
    const options = (await g.call('GET', 'columns/?table_name=Table1')).json().columns.find((c: { name: string }) => c.name === 'Tag').data.options;
    for (let i = 0; i < 10; i++) expect(options.map((o: { name: string }) => o.name)).toContain(`late-${i}`);
    const modifies = await t.container.db.selectFrom('events').select('id').where('row_id', '=', id).where('op_type', '=', 'modify_row').execute();
    expect(modifies).toHaveLength(10);
  });
});
