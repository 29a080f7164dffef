import { afterAll, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { bigTable, sqlCalls } from './row-index.fixtures.js';
import { through } from './rows.fixtures.js';

/**
 * Issue 34, first reads after a start: the row indexes and group sets another process built are loaded
 * before the first request (BaseData.warm, called by startServer), so the first grouped statement reads
 * its set, the first filtered listing its index and the first deep jump the table's position blocks. Without it the first reads went without them (after
 * a restart, a `GROUP BY` over 10,000,000 rows met the 10-s SQL limit). "Big" is lowered to 100 rows.
 */
describe.each(DIALECTS)('row indexes and group sets loaded before the first request (%s)', (dialect) => {
  const shared = new SharedDatabase(dialect);
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
    await shared.dispose();
  });
  const open = async () => {
    const app = await createTestApp(dialect, {}, { database: await shared.open() });
    apps.push(app);
    return app;
  };

  it('a second process on the same database reads the first one’s index and set from its first request', async () => {
    const first = await open();
    const { g, tableId } = await bigTable(first);
    first.container.baseData.indexes.options.minRows = 100;
    first.container.baseData.groupSets.options.minRows = 100;
    const grouped = 'SELECT Kind, COUNT(*) FROM Big GROUP BY Kind';
    const filters = [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }];
    expect((await g.call('POST', 'filtered-rows/?table_name=Big', { filters })).statusCode).toBe(200);
    // A deep jump: the table's position index, then its counted position blocks.
    first.container.baseData.indexes.options.positionSkip = 50;
    expect((await g.call('GET', 'rows/?table_name=Big&start=200&limit=5')).statusCode).toBe(200);
    await first.container.baseData.indexes.idle();
    expect(first.container.baseData.indexes.blocks.has(g.base.id, tableId)).toBe(true);
    const answer = await sqlCalls(() => ({ t: first, g })).run(grouped);
    await first.container.baseData.indexes.idle();
    await first.container.baseData.groupSets.idle();
    expect(first.container.baseData.groupSets.count()).toBe(1);
    const built = (await first.container.baseData.indexes.indexesOf(g.base.id, tableId)).map((e) => e.name).sort();
    expect(built.length).toBeGreaterThan(0);

    const second = await open();
    const { indexes, groupSets } = second.container.baseData;
    // Nothing is loaded before the first use, or the warm-up.
    expect([indexes.count(), groupSets.count()]).toEqual([0, 0]);
    await second.container.baseData.warm();
    expect(groupSets.count()).toBe(1);
    // Without the blocks loaded, the first deep jump counted every entry of the position index (2 s at 10,000,000 rows).
    expect(indexes.blocks.has(g.base.id, tableId)).toBe(true);
    expect((await indexes.indexesOf(g.base.id, tableId)).map((e) => e.name).sort()).toEqual(built);

    // The second process's first grouped statement reads the set, and answers as the first did.
    const calls = sqlCalls(() => ({ t: second, g: through(second, g) }));
    expect(await calls.explain(grouped)).toContain('row_group_rows');
    expect(await calls.run(grouped)).toEqual(answer);
  });
});
