import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, gateway, type Gateway } from '../http/rows.fixtures.js';

/**
 * Dates in (issue #12 item 3): ISO dates and date-times with or without offset and the display formats;
 * an offset is converted into TIME_ZONE (Europe/Berlin here), a day-only column keeps the written day.
 */
describe.each(DIALECTS)('dates in, TIME_ZONE=Europe/Berlin (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    g = await gateway(t);
    await addTable(g, 'In', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Day', column_type: 'date', column_data: { format: 'DD.MM.YYYY' } },
      { column_name: 'At', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
    ]);
  });
  afterAll(() => t?.close());

  async function written(rows: Array<Record<string, unknown>>): Promise<Array<[unknown, unknown, unknown]>> {
    const appended = await g.call('POST', 'rows/', { table_name: 'In', rows });
    expect(appended.statusCode, appended.body).toBe(200);
    const ids = new Set((appended.json().row_ids as Array<{ _id: string }>).map((r) => r._id));
    const listed = await g.call('GET', 'rows/?table_name=In&convert_keys=true');
    return (listed.json().rows as Array<Record<string, unknown>>).filter((r) => ids.has(r._id as string)).map((r) => [r.Title, r.Day, r.At]);
  }

  it('a value with an offset is converted into the zone, across a day, a month and a year', async () => {
    expect(
      await written([
        { Title: 'Z summer', At: '2030-06-20T23:30:00Z' },
        { Title: 'offset winter', At: '2030-12-31T18:30:00-05:00' },
        { Title: 'compact offset', At: '2030-06-30T23:15+0000' },
        { Title: 'same zone', At: '2030-06-20T23:55:00+02:00' },
      ]),
    ).toEqual([
      ['Z summer', null, '2030-06-21T01:30:00+02:00'],
      ['offset winter', null, '2031-01-01T00:30:00+01:00'],
      ['compact offset', null, '2030-07-01T01:15:00+02:00'],
      ['same zone', null, '2030-06-20T23:55:00+02:00'],
    ]);
  });

  it('a day-only column never loses (or gains) a day to an offset', async () => {
    expect(
      await written([
        { Title: 'late west', Day: '2030-06-30T23:30:00-05:00' },
        { Title: 'early east', Day: '2030-01-01T00:30:00+14:00' },
        { Title: 'Z', Day: '2030-12-31T23:59:00Z' },
      ]),
    ).toEqual([
      ['late west', '2030-06-30T00:00:00+02:00', null],
      ['early east', '2030-01-01T00:00:00+01:00', null],
      ['Z', '2030-12-31T00:00:00+01:00', null],
    ]);
  });

  it('takes ISO dates, date-times without offset (the zone\'s wall clock) and the display formats', async () => {
    expect(
      await written([
        { Title: 'iso', Day: '2030-03-30', At: '2030-03-31T01:59:59' },
        { Title: 'slash', Day: '2030/10/27', At: '2030/10/27 03:30' },
        { Title: 'dots', Day: '27.10.2030', At: '27.10.2030 01:30' },
        { Title: 'us', Day: '10/27/2030', At: '10/27/2030 3:00' },
      ]),
    ).toEqual([
      ['iso', '2030-03-30T00:00:00+01:00', '2030-03-31T01:59:00+01:00'],
      ['slash', '2030-10-27T00:00:00+02:00', '2030-10-27T03:30:00+01:00'],
      ['dots', '2030-10-27T00:00:00+02:00', '2030-10-27T01:30:00+02:00'],
      ['us', '2030-10-27T00:00:00+02:00', '2030-10-27T03:00:00+01:00'],
    ]);
  });

  it.each([
    ['no such day', { Day: '2030-02-30' }],
    ['offset beyond 14 hours', { At: '2030-06-20T10:00:00+15:00' }],
    ['hour 24', { At: '2030-06-20 24:00' }],
    ['words', { At: 'tomorrow' }],
    ['a number', { Day: 20300620 }],
    ['day-first format with month 13', { Day: '31/13/2030' }],
  ])('refuses %s with 400 and error_msg, writing nothing', async (_name, row) => {
    const before = (await g.call('GET', 'rows/?table_name=In')).json().rows.length;
    const res = await g.call('POST', 'rows/', { table_name: 'In', rows: [{ Title: 'bad', ...row }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/date/);
    expect((await g.call('GET', 'rows/?table_name=In')).json().rows.length).toBe(before);
  });

  it('updates convert the same way and answer 400 on bad dates', async () => {
    const appended = await g.call('POST', 'rows/', { table_name: 'In', rows: [{ Title: 'update' }] });
    const rowId = appended.json().row_ids[0]._id as string;
    const ok = await g.call('PUT', 'rows/', { table_name: 'In', updates: [{ row_id: rowId, row: { At: '2030-01-31T23:00:00Z' } }] });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await g.call('GET', `rows/${rowId}/?table_name=In&convert_keys=true`)).json().At).toBe('2030-02-01T00:00:00+01:00');
    const bad = await g.call('PUT', 'rows/', { table_name: 'In', updates: [{ row_id: rowId, row: { At: '2030-01-32' } }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error_msg).toMatch(/date/);
    expect((await g.call('GET', `rows/${rowId}/?table_name=In&convert_keys=true`)).json().At).toBe('2030-02-01T00:00:00+01:00');
  });
});
