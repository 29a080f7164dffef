import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { expectNoStall } from '../helpers/ping-stall.js';
import { appWithTable, storedRowCount, type Gateway } from '../http/rows.fixtures.js';

/** Issue #24 item 2: a body's shape is bounded before it is parsed; a refused body costs about its reading. */
describe.each(DIALECTS)('request body shape (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
  });
  afterAll(() => t.close());

  const post = (payload: string) =>
    t.request({ method: 'POST', url: g.url('rows/'), token: g.token, headers: { 'content-type': 'application/json' }, payload });

  it('refuses a 12 MB body with one row of 1,000,000 keys with a 400, without stalling /ping/, and stores nothing', async () => {
    const keys = Array.from({ length: 1_000_000 }, (_, i) => `"key${i}":1`).join(',');
    const body = `{"table_name":"T","rows":[{${keys}}]}`;
    expect(body.length).toBeGreaterThan(12_000_000);
    const before = await storedRowCount(g);
    const res = await expectNoStall(t, () => post(body));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'Request body has an object with more than 10000 keys (BODY_MAX_OBJECT_KEYS).' });
    expect(await storedRowCount(g)).toBe(before);
  });

  it('refuses deep nesting and over-long strings the same way, with a 400 naming the bound', async () => {
    const deep = `{"table_name":"T","rows":[{"Name":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`;
    const deepRes = await expectNoStall(t, () => post(deep));
    expect(deepRes.statusCode).toBe(400);
    expect(deepRes.json()).toEqual({ error_msg: 'Request body is nested deeper than 64 levels.' });
    const long = await post(JSON.stringify({ table_name: 'T', rows: [{ Name: 'x'.repeat(9 * 1024 * 1024) }] }));
    expect(long.statusCode).toBe(400);
    expect(long.json().error_msg).toContain('string longer than 8388608 characters');
  });

  it('still takes a large ordinary batch and JSON with colons, brackets and escapes inside strings', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}: {"x": [1, 2]} \\" \u00e9` }));
    const res = await post(JSON.stringify({ table_name: 'T', rows }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().inserted_row_count).toBe(1000);
  });
});
