import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('export a table or a view as CSV or XLSX (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const exportUrl = (kind: 'table' | 'view', query: string) =>
    `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-export/export-${kind}-to-excel/?dtable_name=${encodeURIComponent(g.base.name)}&${query}`;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
      { column_name: 'Done', column_type: 'checkbox' },
      { column_name: 'Secret', column_type: 'text' },
    ]);
    // More rows than one listing page (1000), and more than the rows API's limit per call.
    const rows = Array.from({ length: 2500 }, (_, i) => ({ Title: `task ${i}`, Points: i, Done: i % 2 === 0, Secret: 's' }));
    for (let i = 0; i < rows.length; i += 1000) await appendRows(g, 'Tasks', rows.slice(i, i + 1000));
    await appendRows(g, 'Tasks', [
      { Title: '=HYPERLINK("http://evil.example","x")', Points: -5, Secret: '+cmd' },
      { Title: '@SUM(A1)', Points: 1 },
      { Title: '-2+3', Points: 2 },
    ]);
    const view = await g.call('POST', 'views/?table_name=Tasks', {
      name: 'Big ones',
      filters: [{ column_name: 'Points', filter_predicate: 'greater', filter_term: 2490 }],
      sorts: [{ column_key: 'Points', sort_type: 'down' }],
      hidden_columns: ['Secret'],
    });
    expect(view.statusCode, view.body).toBe(200);
  }, 120_000);

  afterAll(() => t?.close());

  it('exports a whole table as CSV without a row cap, escaping formula cells', async () => {
    const res = await t.request({ method: 'GET', url: exportUrl('table', 'table_name=Tasks&format=csv'), token: g.owner.token });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="Tasks.csv"/);
    const records = parse(res.body, { bom: true }) as string[][];
    expect(records[0]).toEqual(['Title', 'Points', 'Done', 'Secret']);
    expect(records).toHaveLength(1 + 2500 + 3);
    expect(records[1]).toEqual(['task 0', '0', 'true', 's']);
    expect(records.slice(-3)).toEqual([
      [`'=HYPERLINK("http://evil.example","x")`, '-5', '', `'+cmd`],
      [`'@SUM(A1)`, '1', '', ''],
      [`'-2+3`, '2', '', ''],
    ]);
  }, 60_000);

  it("exports a view as XLSX with the view's filters, sorts and hidden columns", async () => {
    const res = await t.request({ method: 'GET', url: exportUrl('view', 'table_name=Tasks&view_name=Big%20ones'), token: g.owner.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as never);
    const sheet = workbook.worksheets[0]!;
    const values = sheet.getSheetValues().slice(1).map((r) => (r as unknown[]).slice(1));
    expect(values).toEqual([
      ['Title', 'Points', 'Done'],
      ...Array.from({ length: 9 }, (_, i) => [`task ${2499 - i}`, 2499 - i, (2499 - i) % 2 === 0]),
    ]);
  }, 60_000);

  it('reads every page in the listing order: the table by id, a sorted view with ties across pages', async () => {
    // Done (a checkbox, ties everywhere) descending, then insertion order: the order crosses every page.
    const made = await g.call('POST', 'views/?table_name=Tasks', { name: 'By done', sorts: [{ column_key: 'Done', sort_type: 'down' }] });
    expect(made.statusCode, made.body).toBe(200);
    const listed = async (view: string) => {
      const titles: unknown[] = [];
      for (let start = 0; ; start += 1000) {
        const page = (await g.call('GET', `rows/?table_name=Tasks${view}&start=${start}&limit=1000&convert_keys=true`)).json().rows as Array<{ Title: string }>;
        titles.push(...page.map((r) => r.Title));
        if (page.length < 1000) return titles;
      }
    };
    const exported = async (kind: 'table' | 'view', query: string) => {
      const res = await t.request({ method: 'GET', url: exportUrl(kind, `table_name=Tasks&format=csv${query}`), token: g.owner.token });
      expect(res.statusCode).toBe(200);
      return (parse(res.body, { bom: true }) as string[][]).slice(1).map((r) => r[0]!.replace(/^'/, ''));
    };
    const byDone = await exported('view', '&view_name=By%20done');
    expect(byDone).toEqual(await listed('&view_name=By%20done'));
    expect(byDone.slice(0, 2)).toEqual(['task 0', 'task 2']);
    expect(byDone).toHaveLength(2503);
    const table = await exported('table', '');
    expect(table).toEqual(await listed(''));
    expect(table.slice(0, 2)).toEqual(['task 0', 'task 1']);
  }, 60_000);

  it('refuses unknown tables, views, formats and users without access', async () => {
    const stranger = await createUser(t);
    const cases: Array<[string, string | undefined, number]> = [
      [exportUrl('table', 'table_name=Nope'), g.owner.token, 404],
      [exportUrl('view', 'table_name=Tasks&view_name=Nope'), g.owner.token, 404],
      [exportUrl('view', 'table_name=Tasks'), g.owner.token, 400],
      [exportUrl('table', 'table_name=Tasks&format=pdf'), g.owner.token, 400],
      [exportUrl('table', 'table_name=Tasks'), stranger.token, 403],
      [exportUrl('table', 'table_name=Tasks'), undefined, 403],
    ];
    for (const [url, token, status] of cases) {
      const res = await t.request({ method: 'GET', url, ...(token ? { token } : {}) });
      expect(res.statusCode, url).toBe(status);
      expect(Object.keys(res.json())).toEqual([expect.stringMatching(/^(error_msg|detail)$/)]);
    }
  });
});
