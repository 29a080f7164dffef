/**
 * Equivalence for the date functions SQL compiles (year, month, day, hour, minute, second, weekday):
 * for each stored date cell, the formula library (in memory, in TIME_ZONE) and SQL on each dialect
 * give the same number — across month and year ends, DST changes and half-hour zones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellToValue, compileFormula, evaluate, toBool } from '../../src/modules/formulas/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

const ZONES = ['Europe/Berlin', 'America/St_Johns'];
const PARTS = ['year', 'month', 'day', 'hour', 'minute', 'second', 'weekday'];
/** Stored cells as the rows module keeps them: a day, or a UTC instant to the minute. */
const STORED = [
  '2024-01-31',
  '2024-02-29',
  '2024-01-31 23:30',
  '2023-12-31 23:00',
  '2023-12-31 22:59',
  '2024-03-31 00:59',
  '2024-03-31 01:00',
  '2024-10-27 00:59',
  '2024-10-27 01:00',
  '2024-11-03 03:29',
  '2024-11-03 05:00',
  '1969-07-20 20:17',
  '2099-12-31 23:59',
  null,
];

describe.each(DIALECTS.flatMap((d) => ZONES.map((z) => [d, z] as const)))('SQL date functions equal the formula library (%s, %s)', (dialect, zone) => {
  let t: TestApp;
  let g: Gateway;
  let names: string[];

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: zone });
    g = await gateway(t);
    const created = await addTable(g, 'Dates', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'D', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
      { column_name: 'N', column_type: 'number' },
    ]);
    names = STORED.map((_, i) => `r${String(i).padStart(2, '0')}`);
    const ids = await appendRows(g, 'Dates', names.map((Name) => ({ Name })));
    // The stored text itself (not what the API would make of a typed value): that is what both sides read.
    const tableId = (created as { _id?: string })._id ?? (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Dates')._id;
    const meta = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { _id: string }) => x._id === tableId);
    const key = meta.columns.find((c: { name: string }) => c.name === 'D').key as string;
    const nameKey = meta.columns.find((c: { name: string }) => c.name === 'Name').key as string;
    for (const [i, id] of ids.entries()) {
      const data = STORED[i] === null ? { [nameKey]: names[i] } : { [nameKey]: names[i], [key]: STORED[i] };
      await t.container.db.updateTable('base_rows').set({ data: JSON.stringify(data) } as never).where('row_id', '=', id).execute();
    }
  });
  afterAll(() => t.close());

  const inMemory = (formula: string) => {
    const compiled = compileFormula(formula, (name) => (name === 'D' ? { key: 'D', type: 'date' } : undefined));
    return STORED.map((raw) => {
      const value = evaluate(compiled, () => cellToValue('date', raw, zone), { now: 0, timeZone: zone });
      return value === '' || value === undefined ? null : value;
    });
  };

  it.each(PARTS)('select %s(D)', async (part) => {
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name, ${part}(D) FROM Dates ORDER BY Name`, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.map((r: Record<string, unknown>) => r[`${part.toUpperCase()}(D)`])).toEqual(inMemory(`${part}({D})`));
  });

  it.each([
    ['month({D}) = 2', 'month(D) = 2'],
    ['day({D}) = 1', 'day(D) = 1'],
    ['year({D}) = 2024', 'year(D) = 2024'],
    ['hour({D}) >= 2', 'hour(D) >= 2'],
    ['weekday({D}) = 1', 'weekday(D) = 1'],
  ])('where %s ≡ %s', async (formula, condition) => {
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name FROM Dates WHERE ${condition} ORDER BY Name`, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    const compiled = compileFormula(formula, (name) => (name === 'D' ? { key: 'D', type: 'date' } : undefined));
    const expected = names.filter((_, i) => toBool(evaluate(compiled, () => cellToValue('date', STORED[i], zone), { now: 0, timeZone: zone })));
    expect(res.json().results.map((r: { Name: string }) => r.Name)).toEqual(expected);
  });

  it('groups by a date part and refuses date functions over other types', async () => {
    const res = await g.call('POST', 'sql/', { sql: 'SELECT year(D) AS y, COUNT(*) AS n FROM Dates GROUP BY year(D) ORDER BY y', convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    const counts = new Map<unknown, number>();
    for (const y of inMemory('year({D})')) counts.set(y, (counts.get(y) ?? 0) + 1);
    expect(res.json().results).toEqual([...counts].sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : Number(a) - Number(b))).map(([y, n]) => ({ y, n })));
    for (const text of ['SELECT year(N) FROM Dates', 'SELECT month(Name) FROM Dates', "SELECT day('2024-01-01') FROM Dates", 'SELECT weekday(D, 2) FROM Dates']) {
      const bad = await g.call('POST', 'sql/', { sql: text });
      expect(bad.statusCode, text).toBe(400);
    }
  });
});
