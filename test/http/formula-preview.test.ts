import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from './rows.fixtures.js';

/** The formula builder's helpers: the function list and a formula tried on the first rows, storing nothing. */
describe.each(DIALECTS)('formula preview (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    g = await gateway(t);
    await addTable(g, 'Orders', [
      { column_name: 'Item', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Qty', column_type: 'number' },
      { column_name: 'Due', column_type: 'date' },
    ]);
    await appendRows(
      g,
      'Orders',
      Array.from({ length: 25 }, (_, i) => ({ Item: `item ${i}`, Price: i, Qty: 2, Due: '2024-01-31' })),
    );
  });
  afterAll(() => t.close());

  const preview = (body: Record<string, unknown>) => g.call('POST', 'formula-preview/', { table_name: 'Orders', ...body });

  it('lists the function library with categories and argument counts', async () => {
    const res = await g.call('GET', 'formula-functions/');
    expect(res.statusCode).toBe(200);
    const functions = res.json().functions as Array<{ name: string; category: string; min_args: number; max_args: number | null }>;
    expect(functions.find((f) => f.name === 'round')).toEqual({ name: 'round', category: 'math', min_args: 1, max_args: 2 });
    expect(functions.find((f) => f.name === 'concatenate')).toMatchObject({ category: 'text', max_args: null });
    expect(new Set(functions.map((f) => f.category))).toEqual(new Set(['math', 'text', 'date', 'logic']));
  });

  it('computes a formula for the first rows in insertion order (5 by default, up to 20), with its result type, and stores nothing', async () => {
    const before = await g.call('GET', 'metadata/');
    const res = await preview({ formula: 'upper({Item}) & ": " & {Price} * {Qty}' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result_type).toBe('string');
    expect(res.json().rows.map((r: { value: unknown }) => r.value)).toEqual(['ITEM 0: 0', 'ITEM 1: 2', 'ITEM 2: 4', 'ITEM 3: 6', 'ITEM 4: 8']);
    const dates = await preview({ formula: 'eomonth({Due}, 1)', limit: 20 });
    expect(dates.json().result_type).toBe('date');
    expect(dates.json().rows).toHaveLength(20);
    expect(dates.json().rows[0].value).toBe('2024-02-29T00:00:00+01:00');
    expect((await g.call('GET', 'metadata/')).json()).toEqual(before.json());
    const stored = await listRows(g, 'table_name=Orders&convert_keys=true&limit=1');
    expect(Object.keys(stored[0]!).filter((k) => !k.startsWith('_'))).toEqual(expect.arrayContaining(['Item', 'Price', 'Qty', 'Due']));
    expect(Object.keys(stored[0]!).some((k) => k.includes('preview'))).toBe(false);
  });

  it('answers a bad formula or input with the formula column’s 400 and changes nothing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ formula: '{Price} * ' }, /Formula error at position/],
      [{ formula: '{Nope} + 1' }, /column Nope not found/],
      [{ formula: 'nosuchfn(1)' }, /Formula error/],
      [{ formula: '' }, /formula invalid/],
      [{ formula: 42 }, /formula invalid/],
      [{ formula: '1', limit: 0 }, /limit invalid/],
      [{ formula: '1', limit: 21 }, /limit invalid/],
      [{ formula: '1', limit: 'x' }, /limit invalid/],
    ];
    for (const [body, message] of cases) {
      const res = await preview(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error_msg, JSON.stringify(body)).toMatch(message);
    }
    const missing = await g.call('POST', 'formula-preview/', { table_name: 'Nope', formula: '1' });
    expect(missing.statusCode).toBe(404);
  });
});
