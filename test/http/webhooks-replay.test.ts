import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimDeliveries } from '../../src/modules/webhooks/claim.repository.js';
import { DIALECTS, basePath, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, deliveryLog, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(DIALECTS)('webhook replay and bulk redelivery (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_LANES: '1', WEBHOOK_REPLAY_MAX: '5', WEBHOOK_MAX_BACKLOG: '10' }));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    ({ base, receiver } = await freshTarget(t, owner));
    t.clock.set(T0);
  });
  afterEach(() => receiver?.close());

  const post = (hookId: number, action: string, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: basePath(base, `webhooks/${hookId}/${action}/`), token: owner.token, payload });
  const rowIdsReceived = () => receiver.bodies().map((b) => String(b.data.row_id));
  const idsReceived = () => receiver.received.map((r) => String(r.headers['webhook-id']));

  it('redelivers every failed delivery since a time, once, with the original webhook-ids', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status: 400 }, { status: 400 }, { status: 400 });
    const early = changeEvent(base);
    await emit(t, [early]);
    await drain(t);
    t.clock.set(T0 + HOUR);
    const failed = [changeEvent(base), changeEvent(base)];
    await emit(t, failed);
    await drain(t);
    expect(receiver.received).toHaveLength(3);
    const failedIds = idsReceived().slice(1);
    receiver.received.length = 0;

    // Only the failures since T0 + 1h: the earlier one stays as it is.
    const res = await post(hook.id, 'redeliver', { since: iso(T0 + HOUR) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ count: 2 });
    await drain(t);
    expect(rowIdsReceived()).toEqual(failed.map((e) => e.rowId));
    expect(idsReceived()).toEqual(failedIds);
    const log = await deliveryLog(t, owner, base, hook.id);
    expect(log.delivery_list.filter((d) => d.kind === 'redelivery' && d.status === 'succeeded')).toHaveLength(2);

    // Delivered now: asking again queues nothing; epoch seconds work too.
    expect((await post(hook.id, 'redeliver', { since: (T0 + HOUR) / 1000 })).json()).toEqual({ count: 0 });
    // The earlier failure is still there for a wider window.
    expect((await post(hook.id, 'redeliver', { since: T0 / 1000 })).json()).toEqual({ count: 1 });
    await drain(t);

    for (const since of ['yesterday', '2026-01-05T10:00:00', -5, '']) {
      const bad = await post(hook.id, 'redeliver', { since });
      expect(bad.statusCode, String(since)).toBe(400);
      expect(bad.json()).toHaveProperty('error_msg');
    }
    expect((await post(hook.id, 'redeliver', {})).statusCode).toBe(400);
  });

  it('replays a range through the subscription with the original webhook-ids, also changes from before the webhook', async () => {
    const before = changeEvent(base);
    await emit(t, [before]);
    const hook = await createWebhook(t, owner, base, { url: receiver.url(), events: ['insert_row'] });
    t.clock.set(T0 + HOUR);
    const live = changeEvent(base);
    await emit(t, [live, changeEvent(base, { opType: 'delete_row', row: null })]);
    t.clock.set(T0 + 2 * HOUR);
    await emit(t, [changeEvent(base)]);
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    const liveId = idsReceived()[0]!;
    receiver.received.length = 0;

    const res = await post(hook.id, 'replay', { from: iso(T0), to: iso(T0 + HOUR) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ count: 2 }); // the delete is not subscribed, the last change is after `to`
    await drain(t);
    expect(rowIdsReceived()).toEqual([before.rowId, live.rowId]);
    // The delivered change comes again under its live webhook-id (receivers de-duplicate on it).
    expect(idsReceived()[1]).toBe(liveId);
    const replayed = (await deliveryLog(t, owner, base, hook.id)).delivery_list.filter((d) => d.kind === 'replay');
    expect(replayed.map((d) => d.status)).toEqual(['succeeded', 'succeeded']);

    // `to` defaults to now.
    expect((await post(hook.id, 'replay', { from: iso(T0 + HOUR) })).json()).toEqual({ count: 2 });
    await drain(t);

    // Bad input: clear 4xx, nothing queued.
    expect((await post(hook.id, 'replay', { from: iso(T0 + HOUR), to: iso(T0) })).statusCode).toBe(400);
    expect((await post(hook.id, 'replay', { from: 'soon' })).statusCode).toBe(400);
    expect((await post(hook.id, 'replay', {})).statusCode).toBe(400);
    const old = await post(hook.id, 'replay', { from: iso(T0 - 8 * 24 * HOUR) });
    expect(old.statusCode).toBe(410);
    expect(old.json()).toMatchObject({ error_msg: expect.stringContaining('CHANGE_FEED_RETENTION_DAYS'), oldest_from: expect.any(String) });
    // More than WEBHOOK_REPLAY_MAX (5) changes: 400, none queued.
    await emit(t, Array.from({ length: 6 }, () => changeEvent(base)));
    await drain(t);
    const tooMany = await post(hook.id, 'replay', { from: iso(T0) });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json<{ error_msg: string }>().error_msg).toContain('WEBHOOK_REPLAY_MAX');
    expect(await drain(t)).toBe(0);
    expect((await post(9_999_999, 'replay', { from: iso(T0) })).statusCode).toBe(404);
  });

  it('a replay runs behind live deliveries queued after it', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    const old = Array.from({ length: 5 }, () => changeEvent(base));
    await emit(t, old);
    await drain(t);
    receiver.received.length = 0;

    t.clock.set(T0 + HOUR);
    expect((await post(hook.id, 'replay', { from: iso(T0), to: iso(T0) })).json()).toEqual({ count: 5 });
    expect((await post(hook.id, 'replay', { from: iso(T0), to: iso(T0) })).json()).toEqual({ count: 5 });
    // The replay lane is bounded (WEBHOOK_MAX_BACKLOG = 10): a third call is refused, nothing queued.
    const full = await post(hook.id, 'replay', { from: iso(T0), to: iso(T0) });
    expect(full.statusCode).toBe(409);
    expect(full.json()).toHaveProperty('error_msg');
    // A burst of live changes after the replays were queued: not paused by them, and sent first.
    const burst = Array.from({ length: 3 }, () => changeEvent(base));
    await emit(t, burst);
    await drain(t);
    // Every live change went first (lanes = 1: in order, one at a time), then the replays in their order.
    expect(rowIdsReceived()).toEqual([...burst, ...old, ...old].map((e) => e.rowId));
  });

  it('the replay lane waits behind other webhooks’ live deliveries in one claim', async () => {
    const replayed = await createWebhook(t, owner, base, { url: receiver.url('/replayed') });
    const old = Array.from({ length: 3 }, () => changeEvent(base));
    await emit(t, old);
    await drain(t);
    await createWebhook(t, owner, base, { url: receiver.url('/live') });
    receiver.received.length = 0;
    expect((await post(replayed.id, 'replay', { from: iso(T0) })).json()).toEqual({ count: 3 });
    await emit(t, [changeEvent(base)]);
    // One round: the live deliveries of both webhooks are claimed and started before the replay's.
    const claimed = await t.container.db
      .transaction()
      .execute((trx) => claimDeliveries(trx, { now: t.clock.now(), limit: 10, leaseUntil: t.clock.now() + 60_000, token: 'probe', lanes: 4 }, dialect));
    const kinds = await t.container.db.selectFrom('webhook_deliveries').select(['id', 'kind']).where('id', 'in', claimed.map((c) => c.id)).execute();
    const kindOf = new Map(kinds.map((k) => [Number(k.id), k.kind]));
    const order = claimed.map((c) => kindOf.get(c.id));
    expect(order.slice(0, 2)).toEqual(['event', 'event']);
    expect(order.slice(2).every((k) => k === 'replay')).toBe(true);
    expect(order.length).toBeGreaterThan(2);
  });
});
