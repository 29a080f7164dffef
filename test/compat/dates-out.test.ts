import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addTable, gateway, type Gateway } from '../http/rows.fixtures.js';
import { Receiver, createWebhook, drain } from '../http/webhooks-support.js';
import { createRule, dispatch, inbox } from '../http/notification-fixtures.js';

/**
 * Dates out (issue #12 item 3): with TIME_ZONE=Europe/Berlin every answer shows a date cell as RFC 3339
 * with the offset in force at that date, and the same cell is the same string on every path.
 */
describe.each(DIALECTS)('dates out, TIME_ZONE=Europe/Berlin (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let owner: TestUser;
  let receiver: Receiver;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createUser(t);
    g = await gateway(t, owner);
    receiver = await new Receiver().start();
    const table = await addTable(g, 'Dates', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Day', column_type: 'date', column_data: { format: 'YYYY-MM-DD' } },
      { column_name: 'At', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
    ]);
    for (const c of table.columns as Array<{ key: string; name: string }>) keys[c.name] = c.key;
    const formula = await g.call('POST', 'columns/', { table_name: 'Dates', column_name: 'Next', column_type: 'formula', column_data: { formula: 'dateAdd({Day}, 1, "days")' } });
    expect(formula.statusCode, formula.body).toBe(200);
    keys.Next = formula.json().key;
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function append(rows: Array<Record<string, unknown>>) {
    const res = await g.call('POST', 'rows/', { table_name: 'Dates', rows });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { row_ids: Array<{ _id: string }>; first_row: Record<string, unknown> };
  }

  async function byTitle(): Promise<Map<string, Record<string, unknown>>> {
    const res = await g.call('GET', 'rows/?table_name=Dates&convert_keys=true');
    expect(res.statusCode, res.body).toBe(200);
    return new Map((res.json().rows as Array<Record<string, unknown>>).map((r) => [r.Title as string, r]));
  }

  it('shows the offset of the zone at that date: summer, winter, both sides of both DST changes, month and year ends', async () => {
    const cases: Array<[string, string, string]> = [
      ['summer day', '2030-06-20', '2030-06-20T00:00:00+02:00'],
      ['summer minute', '2030-06-20 23:55', '2030-06-20T23:55:00+02:00'],
      ['winter', '2030-01-15 08:00', '2030-01-15T08:00:00+01:00'],
      ['before spring forward', '2030-03-31 01:59', '2030-03-31T01:59:00+01:00'],
      ['after spring forward', '2030-03-31 03:00', '2030-03-31T03:00:00+02:00'],
      ['in the skipped hour', '2030-03-31 02:30', '2030-03-31T03:30:00+02:00'],
      ['before fall back', '2030-10-27 01:30', '2030-10-27T01:30:00+02:00'],
      ['after fall back', '2030-10-27 03:30', '2030-10-27T03:30:00+01:00'],
      ['month end', '2030-04-30 23:59', '2030-04-30T23:59:00+02:00'],
      ['year end', '2030-12-31 23:59', '2030-12-31T23:59:00+01:00'],
      ['leap day', '2032-02-29', '2032-02-29T00:00:00+01:00'],
    ];
    await append(cases.map(([title, written]) => ({ Title: title, At: written })));
    const rows = await byTitle();
    for (const [title, , shown] of cases) expect([title, rows.get(title)!.At]).toEqual([title, shown]);
  });

  it('the same cell is the same string through rows/, rows/{id}/, filtered-rows/, first_row, the whole-base read, SQL, a webhook and a notification', async () => {
    await createWebhook(t, owner, g.base, { url: receiver.url('/dates') });
    const rule = { run_condition: 'per_update', trigger: { rule_name: 'New', table_id: (await tableId()), view_id: '0000', condition: 'rows_added' }, action: { type: 'notify', users: [owner.virtualId], default_msg: 'Due {At}' } };
    await createRule(t, owner, g.base, rule);
    receiver.received.length = 0;

    const appended = await append([{ Title: 'same', Day: '2030-06-20', At: '2030-06-20T21:55:00Z' }]);
    const rowId = appended.row_ids[0]!._id;
    const expected = { Day: '2030-06-20T00:00:00+02:00', At: '2030-06-20T23:55:00+02:00', Next: '2030-06-21T00:00:00+02:00' };
    const pick = (row: Record<string, unknown>, byKey: boolean) => Object.fromEntries(Object.keys(expected).map((n) => [n, row[byKey ? keys[n]! : n]]));

    expect(pick(appended.first_row, true)).toEqual(expected);
    expect(pick((await byTitle()).get('same')!, false)).toEqual(expected);
    const one = await g.call('GET', `rows/${rowId}/?table_name=Dates&convert_keys=true`);
    expect(pick(one.json(), false)).toEqual(expected);
    const filtered = await g.call('POST', 'filtered-rows/?table_name=Dates', { filters: [{ column_name: 'Title', filter_predicate: 'is', filter_term: 'same' }] });
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(pick(filtered.json().rows[0], false)).toEqual(expected);
    const whole = await g.call('GET', '');
    const wholeRow = (whole.json().tables as Array<{ name: string; rows: Array<Record<string, unknown>> }>).find((x) => x.name === 'Dates')!.rows.find((r) => r._id === rowId)!;
    expect(pick(wholeRow, true)).toEqual(expected);
    const sql = await g.call('POST', 'sql/', { sql: `SELECT Day, At, Next FROM Dates WHERE _id = '${rowId}'`, convert_keys: true });
    expect(sql.statusCode, sql.body).toBe(200);
    expect(pick(sql.json().results[0], false)).toEqual(expected);

    await dispatch(t);
    await drain(t);
    const hook = receiver.bodies().find((b) => b.data.row_id === rowId)!;
    const cells = Object.fromEntries((hook.data.row_data as Array<{ column_name: string; value: unknown }>).map((c) => [c.column_name, c.value]));
    expect(pick(cells, false)).toEqual(expected);

    // A notification's message shows the column's display format (the original's templating) of the same wall clock.
    const notice = (await inbox(t, owner)).find((n) => (n.detail.row_id_list as string[] | undefined)?.[0] === rowId)!;
    expect(notice.detail.msg).toBe(`Due ${expected.At.slice(0, 16).replace('T', ' ')}`);
  });

  it('SQL conditions and filters read a written offset in the same zone as the cells', async () => {
    await append([{ Title: 'sql', At: '2030-07-01 00:15' }]);
    const sql = await g.call('POST', 'sql/', { sql: "SELECT Title, At FROM Dates WHERE At = '2030-06-30T22:15:00Z'", convert_keys: true });
    expect(sql.json().results.map((r: { Title: string }) => r.Title)).toEqual(['sql']);
    const naive = await g.call('POST', 'sql/', { sql: "SELECT Title FROM Dates WHERE At = '2030-07-01 00:15'", convert_keys: true });
    expect(naive.json().results.map((r: { Title: string }) => r.Title)).toEqual(['sql']);
    const filtered = await g.call('POST', 'filtered-rows/?table_name=Dates', {
      filters: [{ column_name: 'At', filter_predicate: 'is', filter_term_modifier: 'exact_date', filter_term: '2030-07-01' }],
    });
    expect((filtered.json().rows as Array<{ Title: string }>).map((r) => r.Title)).toEqual(['sql']);
  });

  async function tableId(): Promise<string> {
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    return meta.tables.find((x: { name: string }) => x.name === 'Dates')._id;
  }
});
