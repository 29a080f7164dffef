import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, eventCount, gateway, listRows, storedRowCount, type Gateway } from './rows.fixtures.js';

const rows = (n: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({ Name: `row ${i}`, ...extra(i) }));

describe.each(DIALECTS)('row-count limits (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Amount', column_type: 'number' });
  });
  afterAll(() => t.close());

  it('refuses 1001 rows to append whole, and writes nothing', async () => {
    const res = await g.call('POST', 'rows/', { table_name: 'Table1', rows: rows(1001) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'Number of rows to append exceeds 1000.' });
    expect(await storedRowCount(g)).toBe(0);
  });

  it('writes nothing of a 1000-row append whose last row has one bad cell', async () => {
    const res = await g.call('POST', 'rows/', { table_name: 'Table1', rows: rows(1000, (i) => ({ Amount: i === 999 ? 'not a number' : i })) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toContain('Row 1000: value of column Amount (number) is invalid');
    expect(await storedRowCount(g)).toBe(0);
    expect(await eventCount(g)).toBe(0);
  });

  it('appends exactly 1000 rows with one event each', async () => {
    const ids = await appendRows(g, 'Table1', rows(1000, (i) => ({ Amount: i })));
    expect(new Set(ids).size).toBe(1000);
    expect(await storedRowCount(g)).toBe(1000);
    expect(await eventCount(g)).toBe(1000);
  });

  it('lists at most 1000 rows and refuses a larger limit', async () => {
    await appendRows(g, 'Table1', rows(5));
    expect(await listRows(g, 'table_name=Table1')).toHaveLength(1000);
    expect(await listRows(g, 'table_name=Table1&limit=1000&start=1000')).toHaveLength(5);
    const res = await g.call('GET', 'rows/?table_name=Table1&limit=1001');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'Number of rows to list exceeds 1000.' });
    for (const query of ['limit=0', 'limit=abc', 'start=-1', 'start=x', 'start=1e308', 'start=99999999999999999999', 'limit=1e308']) {
      expect((await g.call('GET', `rows/?table_name=Table1&${query}`)).statusCode, query).toBe(400);
    }
  });

  it('refuses 1001 updates whole', async () => {
    const ids = (await listRows(g, 'table_name=Table1&limit=1000')).map((r) => r._id as string);
    const updates = [...ids, ids[0]!].map((row_id) => ({ row_id, row: { Name: 'changed' } }));
    const res = await g.call('PUT', 'rows/', { table_name: 'Table1', updates });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'Number of rows to update exceeds 1000.' });
    const names = (await listRows(g, 'table_name=Table1&convert_keys=true&limit=1000')).map((r) => r.Name);
    expect(names).not.toContain('changed');
  });

  it('updates 1000 rows in one call', async () => {
    const ids = (await listRows(g, 'table_name=Table1&limit=1000')).map((r) => r._id as string);
    const res = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: ids.map((row_id, i) => ({ row_id, row: { Amount: i * 2 } })) });
    expect(res.statusCode).toBe(200);
    const amounts = (await listRows(g, 'table_name=Table1&convert_keys=true&limit=1000')).map((r) => r.Amount);
    expect(amounts.slice(0, 3)).toEqual([0, 2, 4]);
  });

  it('refuses 10001 rows to delete whole, and deletes up to 10000', async () => {
    const ids = (await listRows(g, 'table_name=Table1&limit=1000')).map((r) => r._id as string);
    const padding = Array.from({ length: 10001 - ids.length }, (_, i) => `missing${String(i).padStart(15, '0')}`);
    const refused = await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [...ids, ...padding] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error_msg: 'Number of rows to delete exceeds 10000.' });
    expect(await storedRowCount(g)).toBe(1005);
    const done = await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [...ids, ...padding.slice(1)] });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({ success: true, deleted_rows: 1000 });
    expect(await storedRowCount(g)).toBe(5);
  });
});

describe.each(DIALECTS)('base operation body limit (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect, { BODY_LIMIT_BYTES: '2048', BASE_BODY_LIMIT_BYTES: '16384' });
    g = await gateway(t);
  });
  afterAll(() => t.close());

  it('allows base bodies above the account limit and refuses ones above BASE_BODY_LIMIT_BYTES', async () => {
    const medium = rows(200); // about 3.6 KB
    expect(JSON.stringify(medium).length).toBeGreaterThan(2048);
    expect((await g.call('POST', 'rows/', { table_name: 'Table1', rows: medium })).statusCode).toBe(200);
    const large = await g.call('POST', 'rows/', { table_name: 'Table1', rows: rows(1000) });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toEqual({ error_msg: 'Request body is too large.' });
    const filtered = await g.t.request({
      method: 'GET',
      url: g.url('filtered-rows/?table_name=Table1'),
      token: g.token,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ filters: rows(1000) }),
    });
    expect(filtered.statusCode).toBe(413);
  });
});

describe('removed pre-gateway prefixes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('answers 410 naming the /api-gateway/ path to use', async () => {
    const uuid = '650d8a0d-7e27-46a8-8b18-6cc6f3db2057';
    const cases: Array<[string, string, string]> = [
      ['GET', `/dtable-server/api/v1/dtables/${uuid}/rows/?table_name=T`, `/api-gateway/api/v2/dtables/${uuid}/rows/`],
      ['POST', `/dtable-server/api/v1/dtables/${uuid}/batch-append-rows/`, `/api-gateway/api/v2/dtables/${uuid}/rows/`],
      ['GET', `/dtable-server/api/v1/dtables/${uuid}/metadata/`, `/api-gateway/api/v2/dtables/${uuid}/metadata/`],
      ['POST', `/dtable-db/api/v1/query/${uuid}/`, `/api-gateway/api/v2/dtables/${uuid}/sql/`],
      ['DELETE', '/dtable-server/something', '/api-gateway/api/v2/dtables/{base_uuid}/…'],
    ];
    for (const [method, url, target] of cases) {
      const res = await t.request({ method: method as 'GET', url });
      expect(res.statusCode, url).toBe(410);
      expect(res.json().error_msg).toContain(target);
      expect(res.json().error_msg).toMatch(/^\/dtable-(server|db)\/ was removed; use /);
    }
  });
});
