import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { expectNoStall } from '../helpers/ping-stall.js';
import { appWithTable, appendRows, listRows, type Gateway } from '../http/rows.fixtures.js';

/** Issue #24 item 1: large formula batches run on formula threads under FORMULA_BATCH_TIMEOUT_MS. */

/** The formulas of formulas.test.ts and formula-cost.test.ts (none reads the clock or the modification time). */
const FORMULAS: Array<[string, string]> = [
  ['Total', '{Price} * {Qty}'],
  ['Label', 'upper({Item}) & " x" & {Qty}'],
  ['Month end', 'eomonth({Due}, 1)'],
  ['Settled', 'and({Paid}, {Total} > 5)'],
  ['Nested', 'regexmatch({Text}, "((a+))+$")'],
  ['Adjacent', 'regexmatch({Text}, "a*a*a*a*a*a*b")'],
  ['Alternation', 'regexmatch({Text}, "(a|a)+$")'],
  ['Ordinary', 'regexextract({Text}, "(a+)!")'],
  ['Weekday', 'weekday({Due})'],
  ['Rounded', 'round({Price} / 3, 2)'],
];

const cellsOf = (i: number) => ({
  Item: `item ${i}`,
  Price: i * 1.5,
  ...(i % 5 === 0 ? {} : { Qty: i % 7 }),
  Due: `2024-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`,
  Paid: i % 2 === 0,
  Text: `${'a'.repeat(i % 120)}${i % 3 === 0 ? '!' : 'b'}`,
});

const formulaThreadsOf = (t: TestApp) => t.container.baseData.writer.formulas;

describe.each(DIALECTS)('formula batches on threads (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, { TIME_ZONE: 'Europe/Berlin' }, [
      { column_name: 'Item', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Qty', column_type: 'number' },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Paid', column_type: 'checkbox' },
      { column_name: 'Text', column_type: 'text' },
      { column_name: 'Copy', column_type: 'number' },
    ]));
    for (const [name, formula] of FORMULAS) {
      const res = await g.call('POST', 'columns/', { table_name: 'T', column_name: name, column_type: 'formula', column_data: { formula } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  afterAll(() => t.close());

  it('computes the same cells on a formula thread as on the main thread', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => cellsOf(i));
    const threads = formulaThreadsOf(t);
    // 10 rows x 10 formulas per request: each batch is under the thread threshold, on the main thread.
    const before = threads.threadBatches;
    for (let i = 0; i < rows.length; i += 10) {
      const res = await g.call('POST', 'rows/', { table_name: 'T', rows: rows.slice(i, i + 10).map((r) => ({ ...r, Copy: 0 })) });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect(threads.threadBatches).toBe(before);
    // The same 200 rows in one request: 2,000 formula cells, on a thread.
    const res = await g.call('POST', 'rows/', { table_name: 'T', rows: rows.map((r) => ({ ...r, Copy: 1 })) });
    expect(res.statusCode, res.body).toBe(200);
    expect(threads.threadBatches).toBe(before + 1);

    const listed = await listRows(g, 'table_name=T&convert_keys=true&limit=1000');
    const main = listed.filter((r) => r.Copy === 0);
    const off = listed.filter((r) => r.Copy === 1);
    expect(main).toHaveLength(200);
    expect(off).toHaveLength(200);
    const formulaCells = (r: Record<string, unknown>) => Object.fromEntries(FORMULAS.map(([name]) => [name, r[name] ?? null]));
    const byItem = new Map(main.map((r) => [r.Item, formulaCells(r)]));
    for (const row of off) expect(formulaCells(row)).toEqual(byItem.get(row.Item));
    // Not vacuous: the cells hold values of every kind.
    const sample = formulaCells(off.find((r) => r.Item === 'item 3')!);
    expect(sample).toMatchObject({ Total: 13.5, Label: 'ITEM 3 x3', 'Month end': '2024-05-31T00:00:00+02:00', Ordinary: 'aaa', Adjacent: false, Rounded: 1.5 });
  });

  it('recomputes a table on a thread when a formula column changes, with the same cells', async () => {
    const threads = formulaThreadsOf(t);
    const before = threads.threadBatches;
    const res = await g.call('PUT', 'columns/', { table_name: 'T', column: 'Total', op_type: 'modify_column_type', new_column_type: 'formula', column_data: { formula: '{Price} * {Qty} + 1' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(threads.threadBatches).toBeGreaterThan(before);
    const listed = await listRows(g, 'table_name=T&convert_keys=true&limit=1000');
    for (const row of listed) expect(row.Total).toBe(Number(row.Price) * Number(row.Qty ?? 0) + 1);
  });
});

describe.each(DIALECTS)('a formula batch over FORMULA_BATCH_TIMEOUT_MS (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  // About 480,000 work units (just under the cell's budget): a few ms per cell, seconds for 1,000 rows x 3.
  const heavy = (n: number) => `len(substitute(substitute(rept({Text}, 4000), "a", "${n}"), "${n}", "c"))`;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, { FORMULA_BATCH_TIMEOUT_MS: '300' }, [{ column_name: 'Text', column_type: 'text' }]));
    for (const n of [1, 2, 3]) {
      const res = await g.call('POST', 'columns/', { table_name: 'T', column_name: `Heavy ${n}`, column_type: 'formula', column_data: { formula: heavy(n) } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  afterAll(() => t.close());

  it('ends with error cells for the rows not reached, the write succeeds and /ping/ keeps answering', async () => {
    const text = 'abcdefghijabcdefghij';
    const threads = formulaThreadsOf(t);
    const before = threads.threadBatches;
    const res = await expectNoStall(t, () => g.call('POST', 'rows/', { table_name: 'T', rows: Array.from({ length: 1000 }, () => ({ Text: text })) }));
    expect(res.statusCode, res.body).toBe(200);
    expect(threads.threadBatches).toBe(before + 1);
    const rows = await listRows(g, 'table_name=T&convert_keys=true&limit=1000');
    expect(rows).toHaveLength(1000);
    // Every cell is its value or, past the time limit, an error (empty) cell; the last rows were not reached.
    for (const row of rows) for (const n of [1, 2, 3]) expect([80_000, null]).toContain(row[`Heavy ${n}`] ?? null);
    expect(rows.slice(-200).every((row) => [1, 2, 3].every((n) => (row[`Heavy ${n}`] ?? null) === null))).toBe(true);
  });

  it('computes a small batch afterwards on the main thread as before', async () => {
    const [id] = await appendRows(g, 'T', [{ Text: 'abcdefghijabcdefghij' }]);
    const row = (await g.call('GET', `rows/${id}/?table_name=T&convert_keys=true`)).json();
    expect(row).toMatchObject({ 'Heavy 1': 80_000, 'Heavy 2': 80_000, 'Heavy 3': 80_000 });
  });
});
