import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithTiedTable, gateway, tiedRows, type Gateway } from './rows.fixtures.js';
import { viewShareToken } from './view-share.fixtures.js';

/**
 * The listing cursor (rows/listing-cursor.ts, a basegate addition): a page with more rows after it answers
 * `next_cursor`; `cursor=` resumes right after the page's last row in the listing's order. Walking a
 * listing by cursor gives exactly the offset answer (ties, empty cells, mixed signs, several sort columns,
 * filters); rows inserted and deleted between pages never make a row that existed throughout be skipped or
 * repeated; damaged and foreign cursors are 400 with the contract's error body.
 */
describe.each(DIALECTS)('listing cursor (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const N = 97;
  const base = () => ({ id: g.base.id, uuid: g.base.uuid });
  type Row = { _id: string; Name: string };
  type Page = { rows: Row[]; next_cursor?: string };

  beforeAll(async () => {
    ({ t, g } = await appWithTiedTable(dialect, [{ column_name: 'Done', column_type: 'checkbox' }]));
    // Many ties (N takes 6 values), empty cells, text with case and accents, booleans.
    await appendRows(
      g,
      'T',
      tiedRows(N).map((row, i) => ({ ...row, Done: i % 3 === 0 })),
    );
    expect((await g.call('POST', 'views/?table_name=T', { name: 'Two sorts' })).statusCode).toBe(200);
    const sorted = await g.call('PUT', 'views/Two sorts/?table_name=T', {
      sorts: [
        { column_key: 'Label', sort_type: 'down' },
        { column_key: 'N', sort_type: 'up' },
      ],
    });
    expect(sorted.statusCode, sorted.body).toBe(200);
    expect((await g.call('POST', 'views/?table_name=T', { name: 'Filtered' })).statusCode).toBe(200);
    const filtered = await g.call('PUT', 'views/Filtered/?table_name=T', {
      filters: [{ column_name: 'N', filter_predicate: 'greater_or_equal', filter_term: 1 }],
      sorts: [{ column_key: 'N', sort_type: 'down' }],
    });
    expect(filtered.statusCode, filtered.body).toBe(200);
  });
  afterAll(() => t.close());

  const FILTER = { filters: [{ column_name: 'Label', filter_predicate: 'is_not_empty' }] };
  /** Listings: a query string, and a filtered-rows/ body or none. */
  const LISTINGS: Array<[string, object | undefined]> = [
    ['', undefined],
    ['order_by=N', undefined],
    ['order_by=N&direction=desc', undefined],
    ['order_by=Label', undefined],
    ['order_by=Label&direction=desc', undefined],
    ['order_by=Done&direction=desc', undefined],
    ['view_name=Two sorts', undefined],
    ['view_name=Filtered', undefined],
    ['', FILTER],
    ['order_by=N', FILTER],
  ];

  const get = async (query: string, filter: object | undefined, extra: string): Promise<{ status: number; body: Page & { error_msg?: string } }> => {
    const url = `${filter ? 'filtered-rows' : 'rows'}/?table_name=T&convert_keys=true&${query}&${extra}`;
    const res = filter ? await g.call('POST', url, filter) : await g.call('GET', url);
    return { status: res.statusCode, body: res.json() };
  };
  const page = async (query: string, filter: object | undefined, extra: string): Promise<Page> => {
    const res = await get(query, filter, extra);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  /** The offset answer: every row of the listing in one page (no positions, no cursor). */
  const all = async (query: string, filter: object | undefined): Promise<string[]> => {
    const input = Object.fromEntries(new URLSearchParams(`table_name=T&convert_keys=true&limit=1000&${query}`));
    return (await t.container.baseData.rows.list(base(), { ...input, limit: 1000 }, {}, filter as Record<string, unknown> | undefined)).map((r) => String(r.Name));
  };
  /** Every page by cursor, from the first; `between` runs before each next page. */
  const walk = async (query: string, filter: object | undefined, size: number, between?: (i: number) => Promise<void>): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 1000; i++) {
      const p = await page(query, filter, `limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...p.rows.map((r) => r.Name));
      if (!p.next_cursor) {
        expect(p.rows.length).toBeLessThanOrEqual(size);
        return seen;
      }
      expect(p.rows).toHaveLength(size);
      cursor = p.next_cursor;
      await between?.(i);
    }
    throw new Error('no last page');
  };

  it.each(LISTINGS)('walks %s (filter %j) by cursor as the offsets answer', async (query, filter) => {
    const expected = await all(query, filter);
    expect(expected.length).toBeGreaterThan(20);
    for (const size of [1, 7, 10, expected.length]) expect(await walk(query, filter, size)).toEqual(expected);
    // A page by start carries the cursor of the page after it; the last page (here an exact fit) none.
    const first = await page(query, filter, 'start=0&limit=10');
    const second = await page(query, filter, `limit=10&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(second.rows.map((r) => r.Name)).toEqual(expected.slice(10, 20));
    const exact = await page(query, filter, `start=${expected.length - 5}&limit=5`);
    expect(exact.rows.map((r) => r.Name)).toEqual(expected.slice(-5));
    expect(exact.next_cursor).toBeUndefined();
    expect(Object.keys(await page(query, filter, 'limit=1000'))).toEqual(['rows']);
  });

  it('shows the bytes of the page ends it keeps in /metrics', async () => {
    await page('order_by=N', undefined, 'start=0&limit=10');
    const bytes = t.container.baseData.rows.positions.stats.bytes;
    expect(bytes).toBeGreaterThan(0);
    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/basegate_read_cache_bytes\{cache="positions"\} [1-9]/);
  });

  it('answers a start beyond a known page end as the offsets do, across the empty cells that sort last', async () => {
    // The known end is at 10; the skip from there runs through the filled values' range into the empty
    // cells' range (sort-sql.ts keysetRanges), counting the first range when it holds no row of the page.
    for (const query of ['order_by=N', 'order_by=N&direction=desc', 'order_by=Label', 'view_name=Two sorts']) {
      const expected = await all(query, undefined);
      for (let s = 11; s <= expected.length; s += 3) {
        t.container.baseData.rows.positions.clear();
        t.container.baseData.snapshots.evict(g.base.id);
        await page(query, undefined, 'start=0&limit=10');
        t.container.baseData.snapshots.evict(g.base.id);
        expect((await page(query, undefined, `start=${s}&limit=4`)).rows.map((r) => r.Name), `${query} start=${s}`).toEqual(expected.slice(s, s + 4));
      }
    }
  });

  it('walks the same through the row indexes the listings cause (sort and filter indexes)', async () => {
    const indexes = t.container.baseData.indexes;
    indexes.options.minRows = 10;
    indexes.options.recountMs = 0;
    const NUMERIC = { filters: [{ column_name: 'N', filter_predicate: 'greater', filter_term: 0 }] };
    const listings: Array<[string, object | undefined]> = [['order_by=N', undefined], ['order_by=Label&direction=desc', undefined], ['order_by=N', NUMERIC], ['', NUMERIC]];
    for (const [query, filter] of listings) await page(query, filter, 'limit=5');
    await indexes.idle();
    expect(indexes.count()).toBeGreaterThan(0);
    for (const [query, filter] of listings) {
      const expected = await all(query, filter);
      for (const size of [3, 10]) expect(await walk(query, filter, size)).toEqual(expected);
    }
  });

  it('neither skips nor repeats a row that existed throughout while rows are inserted and deleted between pages', async () => {
    for (const [query, filter] of [['order_by=N', undefined], ['view_name=Two sorts', undefined], ['', undefined], ['order_by=Label', FILTER]] as const) {
      const before = await t.container.baseData.rows.list(base(), { table_name: 'T', convert_keys: true, limit: 1000 }, {});
      const deleted = new Set<string>();
      let added = 0;
      const seen = await walk(query, filter, 8, async (i) => {
        // New rows that sort everywhere (before the cursor, after it, among ties), and deletes of rows
        // already seen, not yet seen, and the page's last row (the cursor's own row).
        await appendRows(g, 'T', [
          { Name: `new${added++}`, N: i % 6, Label: ['a', 'Z', 'é'][i % 3] },
          { Name: `new${added++}`, N: -3, Label: 'A' },
          { Name: `new${added++}` },
        ]);
        const current = await t.container.baseData.rows.list(base(), { table_name: 'T', convert_keys: true, limit: 1000 }, {});
        const original = current.filter((r) => String(r.Name).startsWith('r') && !deleted.has(String(r._id)));
        for (const victim of [original[(i * 13) % original.length], original[(i * 29 + 5) % original.length]]) {
          if (!victim || deleted.has(String(victim._id))) continue;
          deleted.add(String(victim._id));
          expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_id: victim._id })).statusCode).toBe(200);
        }
      });
      const expected = await all(query, filter);
      const throughout = new Set(before.filter((r) => !deleted.has(String(r._id))).map((r) => String(r.Name)));
      const listedThroughout = expected.filter((name) => throughout.has(name));
      // Every row there all along and in the listing: once, in the listing's order.
      expect(seen.filter((name) => throughout.has(name))).toEqual(listedThroughout);
      expect(new Set(seen).size).toBe(seen.length);
      // Put the table back for the next listing.
      const restore = await t.container.baseData.rows.list(base(), { table_name: 'T', convert_keys: true, limit: 1000 }, {});
      const extra = restore.filter((r) => String(r.Name).startsWith('new')).map((r) => r._id);
      if (extra.length > 0) expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: extra })).statusCode).toBe(200);
    }
  });

  it('refuses damaged, foreign and misused cursors with 400 and an error_msg', async () => {
    const first = await page('order_by=N', undefined, 'limit=5');
    const cursor = first.next_cursor!;
    const [payload, check] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
    const tampered = `${Buffer.from(JSON.stringify([decoded[0], Number(decoded[1]) + 1, decoded[2]])).toString('base64url')}.${check}`;
    const refused = async (query: string, filter: object | undefined, extra: string) => {
      const res = await get(query, filter, extra);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error_msg']);
      expect(typeof res.body.error_msg).toBe('string');
    };
    for (const bad of ['x', 'x.y', `${payload}.`, `${payload}.${check}.z`, tampered, `${payload}.${'A'.repeat(check.length)}`, 'A'.repeat(5000)]) {
      await refused('order_by=N', undefined, `limit=5&cursor=${encodeURIComponent(bad)}`);
    }
    const c = encodeURIComponent(cursor);
    // Another order, direction, view, filter, table — and with a start.
    await refused('order_by=Label', undefined, `limit=5&cursor=${c}`);
    await refused('order_by=N&direction=desc', undefined, `limit=5&cursor=${c}`);
    await refused('view_name=Filtered', undefined, `limit=5&cursor=${c}`);
    await refused('order_by=N', FILTER, `limit=5&cursor=${c}`);
    await refused('order_by=N', undefined, `start=5&limit=5&cursor=${c}`);
    await addTable(g, 'Other', [{ column_name: 'N', column_type: 'number' }]);
    const other = await g.call('GET', `rows/?table_name=Other&order_by=N&limit=5&cursor=${c}`);
    expect(other.statusCode).toBe(400);
    // Another base's cursor for a listing of the same shape.
    const g2 = await gateway(t);
    await addTable(g2, 'T', [{ column_name: 'N', column_type: 'number' }]);
    const foreign = await g2.call('GET', `rows/?table_name=T&order_by=N&limit=5&cursor=${c}`);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toEqual({ error_msg: 'cursor invalid.' });
    // The good one still works.
    expect((await page('order_by=N', undefined, `limit=5&cursor=${c}`)).rows).toHaveLength(5);
  });

  it('walks a view share by cursor: its view imposed on every page, its cursor refused by the base token for another view', async () => {
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string; views: Array<{ _id: string; name: string }> }> } }>().metadata;
    const table = meta.tables.find((x) => x.name === 'T')!;
    const view = table.views.find((v) => v.name === 'Filtered')!;
    const { token } = await viewShareToken(t, { owner: g.owner, base: g.base, tableId: table._id, viewId: view._id, permission: 'r' });
    const expected = await all('view_name=Filtered', undefined);
    const seen: string[] = [];
    let cursor: string | undefined;
    let firstCursor: string | undefined;
    for (;;) {
      // The share names no view: the token's view is imposed (sorted by N, descending, filtered).
      const res = await g.call('GET', `rows/?table_id=${table._id}&convert_keys=true&limit=6${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, undefined, token);
      expect(res.statusCode, res.body).toBe(200);
      const p = res.json<Page>();
      seen.push(...p.rows.map((r) => r.Name));
      if (!p.next_cursor) break;
      cursor = p.next_cursor;
      firstCursor ??= cursor;
    }
    expect(seen).toEqual(expected);
    // The same cursor is the view's with the base's own token too, and foreign to the table without the view.
    expect((await page('view_name=Filtered', undefined, `limit=6&cursor=${encodeURIComponent(firstCursor!)}`)).rows.map((r) => r.Name)).toEqual(expected.slice(6, 12));
    expect((await get('', undefined, `limit=6&cursor=${encodeURIComponent(firstCursor!)}`)).status).toBe(400);
  });

  it('carries a long sort value by its row: same answer, refused once that row is gone', async () => {
    const long = (i: number) => `${String.fromCharCode(97 + (i % 3))}${'x'.repeat(3000)}${i % 4}`;
    await addTable(g, 'Long', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Text', column_type: 'long-text' },
    ]);
    const ids = await appendRows(g, 'Long', Array.from({ length: 30 }, (_, i) => ({ Name: `l${i}`, ...(i % 7 === 3 ? {} : { Text: long(i) }) })));
    const input = { table_name: 'Long', convert_keys: true, order_by: 'Text', limit: 1000 };
    const expected = (await t.container.baseData.rows.list(base(), input, {})).map((r) => String(r.Name));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const res = await g.call('GET', `rows/?table_name=Long&convert_keys=true&order_by=Text&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const p = res.json<Page>();
      seen.push(...p.rows.map((r) => r.Name));
      if (!p.next_cursor) break;
      expect(p.next_cursor.length).toBeLessThanOrEqual(2048);
      cursor = p.next_cursor;
    }
    expect(seen).toEqual(expected);
    const first = (await g.call('GET', 'rows/?table_name=Long&convert_keys=true&order_by=Text&limit=4')).json<Page>();
    const lastId = first.rows[3]!._id;
    expect(ids).toContain(lastId);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Long', row_id: lastId })).statusCode).toBe(200);
    const gone = await g.call('GET', `rows/?table_name=Long&order_by=Text&limit=4&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(gone.statusCode).toBe(400);
    expect(gone.json<{ error_msg: string }>().error_msg).toMatch(/cursor invalid/);
  });
});
