import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, createWebhook, deliveryLog, drain, webhookApp } from './webhooks-support.js';

type Hook = { id: number; subscription?: Record<string, unknown> };

describe.each(DIALECTS)('filtered webhooks and only real changes (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let token: string;
  let receiver: Receiver;
  const gw = (path: string) => `/api-gateway/api/v2/dtables/${base.uuid}/${path}`;
  const call = async (method: 'POST' | 'PUT' | 'DELETE', path: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method, url: gw(path), token, payload });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Record<string, unknown>>();
  };
  const settle = async () => {
    await t.container.dispatcher.runOnce();
    await drain(t);
  };
  const insert = async (row: Record<string, unknown>, table = 'Table1') => {
    const res = await call('POST', 'rows/', { table_name: table, rows: [row] });
    return ((res.row_ids as Array<{ _id: string }>)[0]!)._id;
  };
  const update = (rowId: string, row: Record<string, unknown>) => call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: rowId, row }] });
  const eventCount = async () => Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect));
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
  beforeEach(async () => {
    base = await createBase(t, owner);
    token = await baseToken(t, owner, base);
    receiver.received.length = 0;
    await call('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' });
    await call('POST', 'columns/', { table_name: 'Table1', column_name: 'Note', column_type: 'text' });
    await call('POST', 'tables/', { table_name: 'Other' });
  });

  it('a filter on a column that did not change sends nothing; tables, events and filters select the changes', async () => {
    const watch = (await createWebhook(t, owner, base, { url: receiver.url('/score'), tables: ['Table1'], columns: ['Score'], events: ['modify_row'] })) as Hook;
    expect(watch.subscription).toEqual({ tables: ['0000'], columns: [expect.any(String)], events: ['modify_row'], filters: null, filter_conjunction: 'And', fire_on: 'matching' });
    await createWebhook(t, owner, base, {
      url: receiver.url('/high'),
      tables: 'Table1',
      filters: JSON.stringify([{ column_name: 'Score', filter_predicate: 'greater', filter_term: 10 }]),
    });
    await createWebhook(t, owner, base, { url: receiver.url('/all') });

    const row = await insert({ Name: 'a', Score: 5 });
    await insert({ Name: 'b' }, 'Other');
    await update(row, { Note: 'only the note' });
    await update(row, { Score: 20 });
    await settle();
    const paths = (p: string) => receiver.received.filter((r) => r.path === p).map((r) => (JSON.parse(r.body) as { data: { op_type: string; table_name: string } }).data);
    expect(paths('/all').map((d) => `${d.table_name}:${d.op_type}`)).toEqual(['Table1:insert_row', 'Other:insert_row', 'Table1:modify_row', 'Table1:modify_row']);
    // Only the Score change: the insert is not a subscribed event, the note did not touch Score.
    expect(paths('/score').map((d) => d.op_type)).toEqual(['modify_row']);
    // Score > 10 on the row after the change: only the last update.
    expect(paths('/high')).toHaveLength(1);
    expect(receiver.received.find((r) => r.path === '/high')!.body).toContain('"value": 20, "old_value": 5');
  });

  it('fire_on starts_matching fires when a row enters the filter, not while it stays in it', async () => {
    await createWebhook(t, owner, base, {
      url: receiver.url('/enter'),
      tables: ['Table1'],
      filters: [{ column_name: 'Score', filter_predicate: 'greater', filter_term: 10 }],
      fire_on: 'starts_matching',
    });
    const row = await insert({ Name: 'a', Score: 5 });
    await update(row, { Score: 11 }); // enters
    await update(row, { Score: 12 }); // stays
    await update(row, { Score: 1 }); // leaves
    await update(row, { Score: 50 }); // enters again
    await insert({ Name: 'b', Score: 99 }); // born matching
    await settle();
    const values = receiver.bodies().map((b) => `${b.data.op_type as string}:${JSON.stringify((b.data.row_data as Array<{ column_name: string; value: unknown }>).find((c) => c.column_name === 'Score')?.value)}`);
    // Per-row order only (different rows go in parallel lanes).
    expect(values.sort()).toEqual(['insert_row:99', 'modify_row:11', 'modify_row:50']);
  });

  it('dry-run says why a past change was or was not sent', async () => {
    const early = await insert({ Name: 'before' });
    const hook = (await createWebhook(t, owner, base, { url: receiver.url('/dry'), columns: ['Score'] })) as Hook;
    await update(early, { Note: 'x' });
    await update(early, { Score: 3 });
    await settle();
    const events = await t.container.db.selectFrom('events').select(['id', 'op_type']).where('base_id', '=', base.id).orderBy('id').execute();
    const ask = async (eventId: unknown) =>
      t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/dry-run/`), token: owner.token, payload: { event_id: eventId } });
    const [first, note, score] = events.slice(-3).map((e) => Number(e.id));
    expect((await ask(first)).json()).toMatchObject({ would_send: false, reason: 'before_webhook_created', delivery_id: null });
    expect((await ask(note)).json()).toMatchObject({ would_send: false, reason: 'no_watched_column_changed', delivery_id: null });
    const sent = (await ask(score)).json<{ would_send: boolean; reason: string; delivery_id: number; delivery_status: string }>();
    expect(sent).toMatchObject({ would_send: true, reason: 'matched', delivery_status: 'succeeded' });
    expect((await deliveryLog(t, owner, base, hook.id)).delivery_list.map((d) => d.id)).toEqual([sent.delivery_id]);
    // Bad input: clear 4xx, never a 500.
    expect((await ask('abc')).statusCode).toBe(400);
    expect((await ask(999_999_999)).statusCode).toBe(404);
  });

  it('refuses bad subscriptions with a 400 naming the field; PUT edits and clears it', async () => {
    const bad = async (payload: Record<string, unknown>, message: RegExp) => {
      const res = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: receiver.url('/bad'), ...payload } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ error_msg: string }>().error_msg).toMatch(message);
    };
    await bad({ tables: ['Nope'] }, /tables: table Nope not found/);
    await bad({ columns: ['Nope'] }, /columns: column Nope not found/);
    await bad({ events: ['explode_row'] }, /events: explode_row/);
    await bad({ filters: [{ column_name: 'Score', filter_predicate: 'greater', filter_term: 1 }] }, /exactly one table/);
    await bad({ tables: ['Table1'], filters: [{ column_name: 'Nope', filter_predicate: 'is', filter_term: 1 }] }, /Nope/);
    await bad({ tables: ['Table1'], filters: '[not json' }, /not valid JSON/);
    await bad({ fire_on: 'sometimes' }, /fire_on/);
    await bad({ tables: Array.from({ length: 201 }, (_, i) => `t${i}`) }, /at most 200/);

    const hook = (await createWebhook(t, owner, base, { url: receiver.url('/edit'), events: ['insert_row'] })) as Hook;
    const put = async (payload: Record<string, unknown>) =>
      (await t.request({ method: 'PUT', url: basePath(base, `webhooks/${hook.id}/`), token: owner.token, payload })).json<{ webhook: Hook }>().webhook;
    expect((await put({ tables: ['Other'] })).subscription).toMatchObject({ tables: [expect.any(String)], events: ['insert_row'] });
    const cleared = await put({ tables: null, events: [] });
    expect(cleared.subscription).toBeUndefined();
    expect(Object.keys(cleared).sort()).toEqual(['created_at', 'creator', 'dtable_uuid', 'id', 'is_valid', 'settings', 'url']);
  });

  it('a write that leaves every value as it was emits no event at all', async () => {
    await createWebhook(t, owner, base, { url: receiver.url('/noop') });
    const row = await insert({ Name: 'same', Score: 1 });
    await settle();
    const before = await eventCount();
    const sent = receiver.received.length;
    await update(row, { Name: 'same', Score: 1 });
    await call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: row, row: { Score: 1 } }, { row_id: row, row: {} }] });
    await settle();
    expect(await eventCount()).toBe(before);
    expect(receiver.received.length).toBe(sent);
    // A real change is still sent, with each changed column's old and new value.
    await update(row, { Score: 2, Name: 'same' });
    await settle();
    expect(await eventCount()).toBe(before + 1);
    expect(receiver.bodies().at(-1)!.data.row_data).toEqual([expect.objectContaining({ column_name: 'Score', value: 2, old_value: 1 })]);
  });
});
