import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, type Gateway } from './rows.fixtures.js';

/** /metrics shows every read cache's size in bytes (rows/rows.metrics.ts), each within its bound. */
describe.each(DIALECTS)('read cache sizes in /metrics (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
    await appendRows(g, 'T', Array.from({ length: 50 }, (_, i) => ({ Name: `row ${i} ${'数据'.repeat(i)}` })));
  });
  afterAll(() => t.close());

  it('lists the bytes of each cache after reads', async () => {
    // Rows are kept on their second read (row-fragments.ts): a second page of the same rows.
    expect((await g.call('GET', 'rows/?table_name=T&limit=20')).statusCode).toBe(200);
    expect((await g.call('GET', 'rows/?table_name=T&limit=21')).statusCode).toBe(200);
    expect((await g.call('GET', '')).statusCode).toBe(200);
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body;
    const bytes = (cache: string) => Number(new RegExp(`^basegate_read_cache_bytes\\{cache="${cache}"\\} (\\d+)`, 'm').exec(text)?.[1]);
    for (const cache of ['snapshot', 'page', 'fragments', 'metadata', 'known_metadata']) expect(bytes(cache), cache).toBeGreaterThanOrEqual(0);
    expect(bytes('fragments')).toBeGreaterThan(0);
    expect(bytes('metadata')).toBeGreaterThan(0);
    expect(bytes('fragments')).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(bytes('metadata')).toBeLessThanOrEqual(32 * 1024 * 1024);
  });
});
