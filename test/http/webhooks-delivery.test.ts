import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { DIALECTS, basePath, createBase, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, deliveryLog, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

const hmac = (algorithm: string, key: string, data: string, encoding: 'hex' | 'base64' = 'hex') =>
  createHmac(algorithm, key).update(data, 'utf8').digest(encoding);

describe.each(DIALECTS)('webhook delivery (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    // Strict per-webhook order (the lane-parallel default is covered in webhooks-lanes.test.ts).
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_LANES: '1' }));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    ({ base, receiver } = await freshTarget(t, owner));
  });
  afterEach(() => receiver?.close());

  it('POSTs every change with the documented body, headers and four verifiable signatures', async () => {
    // standardwebhooks checks webhook-timestamp against the real time: put the manual clock there.
    t.clock.set(Date.now());
    const secret = 'sëcret-🔑-value';
    await createWebhook(t, owner, base, { url: receiver.url('/in?x=1'), secret });
    const insert = changeEvent(base, {
      rowId: 'AAAAAAAAAAAAAAAAAAAAAA',
      rowName: 'Zoë',
      opTime: 1_767_607_200_589,
      rowData: [
        { column_key: '0000', column_name: 'Name', column_type: 'text', column_data: null, value: 'Zoë', old_value: null },
        { column_key: 'a1b2', column_name: 'Count', column_type: 'number', column_data: { format: 'number' }, value: 1.5, old_value: null },
      ],
    });
    const modify = changeEvent(base, {
      opType: 'modify_row',
      opApp: 'my-app',
      rowData: [{ column_key: 'a1b2', column_name: 'Count', column_type: 'number', column_data: {}, value: 2, old_value: 1.5 }],
    });
    const remove = changeEvent(base, {
      opType: 'delete_row',
      row: null,
      rowData: [{ column_key: '0000', column_name: 'Name', column_type: 'text', column_data: null, value: null, old_value: 'x' }],
    });
    await emit(t, [insert, modify, remove]);
    expect(await drain(t)).toBe(3);

    expect(receiver.received.map((r) => [r.method, r.path])).toEqual([
      ['POST', '/in?x=1'],
      ['POST', '/in?x=1'],
      ['POST', '/in?x=1'],
    ]);
    // The body is Python's json.dumps of the original's message: byte-identical for re-serializing receivers.
    expect(receiver.received[0]!.body).toBe(
      `{"event": "update", "data": {"dtable_uuid": "${base.uuid}", "row_id": "AAAAAAAAAAAAAAAAAAAAAA", ` +
        '"op_user": "someone@auth.local", "op_type": "insert_row", "op_time": 1767607200.589, "table_id": "0000", ' +
        '"table_name": "Table1", "row_name": "Zo\\u00eb", "row_data": [{"column_key": "0000", "column_name": "Name", ' +
        '"column_type": "text", "column_data": null, "value": "Zo\\u00eb", "old_value": null}, {"column_key": "a1b2", ' +
        '"column_name": "Count", "column_type": "number", "column_data": {"format": "number"}, "value": 1.5, "old_value": null}], ' +
        '"op_app": null}}',
    );
    const [, second, third] = receiver.bodies();
    expect(second!.data).toMatchObject({ op_type: 'modify_row', op_app: 'my-app', row_data: [{ column_key: 'a1b2', value: 2, old_value: 1.5 }] });
    expect(third!.data).toMatchObject({ op_type: 'delete_row', row_data: [{ value: null, old_value: 'x' }] });

    const ids = new Set<string>();
    for (const request of receiver.received) {
      const h = request.headers as Record<string, string>;
      expect(h['content-type']).toBe('application/json');
      expect(h['user-agent']).toBe(`basegate/${VERSION}`);
      expect(h['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
      ids.add(h['webhook-id']!);
      expect(h['webhook-timestamp']).toBe(String(Math.floor(t.clock.now() / 1000)));
      expect(h['x-service-signature']).toBe(`sha1=${hmac('sha1', secret, request.body)}`);
      expect(h['x-service-signature-256']).toBe(`sha256=${hmac('sha256', secret, request.body)}`);
      expect(h['x-seatable-signature']).toBe(`sha256=${hmac('sha256', secret, request.body)}`);
      // Standard Webhooks, verified by its reference library: the key is the secret's UTF-8 bytes.
      expect(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(request.body, h)).toEqual(JSON.parse(request.body));
      expect(new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(request.body, h)).toBeTruthy();
      expect(() => new Webhook(Buffer.from('wrong secret').toString('base64')).verify(request.body, h)).toThrow();
      expect(() => new Webhook(Buffer.from(secret).toString('base64')).verify(request.body + ' ', h)).toThrow();
    }
    expect(ids.size).toBe(3);
  });

  it('sends no signature headers without a secret', async () => {
    await createWebhook(t, owner, base, { url: receiver.url() });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const h = receiver.received[0]!.headers;
    for (const name of ['x-service-signature', 'x-service-signature-256', 'x-seatable-signature', 'webhook-signature']) {
      expect(h[name], name).toBeUndefined();
    }
    expect(h['webhook-id']).toBeDefined();
    expect(h['webhook-timestamp']).toBeDefined();
  });

  it('delivers to every valid webhook of the base and only of that base', async () => {
    const second = await new Receiver().start();
    const otherBase = await createBase(t, owner);
    const third = await new Receiver().start();
    try {
      await createWebhook(t, owner, base, { url: receiver.url() });
      await createWebhook(t, owner, base, { url: second.url() });
      await createWebhook(t, owner, otherBase, { url: third.url() });
      await emit(t, [changeEvent(base), changeEvent(otherBase), changeEvent(base)]);
      await drain(t);
      expect(receiver.received).toHaveLength(2);
      expect(second.received).toHaveLength(2);
      expect(third.received).toHaveLength(1);
      expect(third.bodies()[0]!.data.dtable_uuid).toBe(otherBase.uuid);
      // The same event carries a different webhook-id per webhook.
      expect(receiver.received[0]!.headers['webhook-id']).not.toBe(second.received[0]!.headers['webhook-id']);
    } finally {
      await second.close();
      await third.close();
    }
  });

  it('queues nothing for events of bases without webhooks, and a replayed event is not queued twice', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    await emit(t, [changeEvent(base)]);
    const [event] = await t.container.db.selectFrom('events').select('id').orderBy('id', 'desc').limit(1).execute();
    // Hand the same event to the consumer again (as after a crash before the acknowledgement).
    const { eventsAfter } = await import('../../src/modules/events/index.js');
    const replay = await eventsAfter(t.container.db, Number(event!.id) - 1, 1);
    await t.container.webhooks.consumer.handle(t.container.db, replay);
    await drain(t);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveryLog(t, owner, base, hook.id)).total_count).toBe(1);
  });

  it('keeps per-webhook order: a head waiting for its retry holds back later deliveries of that webhook only', async () => {
    const other = await new Receiver().start();
    try {
      await createWebhook(t, owner, base, { url: receiver.url() });
      await createWebhook(t, owner, base, { url: other.url() });
      receiver.replies.push({ status: 503 });
      const events = [changeEvent(base), changeEvent(base), changeEvent(base)];
      await emit(t, events);
      // One round sends at most one delivery per webhook (one in flight per webhook).
      expect(await t.container.webhooks.deliverer.runOnce()).toBe(2);
      expect(receiver.received).toHaveLength(1);
      expect(other.received).toHaveLength(1);
      await drain(t);
      expect(receiver.received).toHaveLength(1); // the head waits ~5 s for its retry
      expect(other.bodies().map((b) => b.data.row_id)).toEqual(events.map((e) => e.rowId));
      t.clock.advance(6_000);
      await drain(t);
      expect(receiver.bodies().map((b) => b.data.row_id)).toEqual([events[0]!.rowId, ...events.map((e) => e.rowId)]);
      expect(receiver.received[0]!.headers['webhook-id']).toBe(receiver.received[1]!.headers['webhook-id']);
    } finally {
      await other.close();
    }
  });

  it('the worker pool keeps every webhook busy, one attempt in flight per webhook, each in order', async () => {
    const paths = ['/p1', '/p2', '/p3'];
    for (const p of paths) await createWebhook(t, owner, base, { url: receiver.url(p) });
    receiver.reply = () => ({ status: 200, delayMs: 3 });
    const events = Array.from({ length: 15 }, () => changeEvent(base));
    await emit(t, events);
    expect(await t.container.webhooks.delivery.runPool(() => true)).toBe(45);
    for (const p of paths) {
      expect(receiver.received.filter((r) => r.path === p).map((r) => JSON.parse(r.body).data.row_id), p).toEqual(events.map((e) => e.rowId));
      expect(receiver.maxOpen.get(p), p).toBe(1);
    }
    // The three webhooks were served side by side, not one after another.
    expect(receiver.maxOpenTotal).toBeGreaterThan(1);
    // With nothing due it returns at once; `keepGoing` false claims nothing.
    expect(await t.container.webhooks.delivery.runPool(() => true)).toBe(0);
    await emit(t, [changeEvent(base)]);
    expect(await t.container.webhooks.delivery.runPool(() => false)).toBe(0);
    expect(await drain(t)).toBe(3);
  });

  it('logs every attempt, newest delivery first, paginated', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url(), secret: 'log-secret' });
    receiver.replies.push({ status: 500, body: 'boom' });
    await emit(t, [changeEvent(base, { opType: 'insert_row' }), changeEvent(base, { opType: 'modify_row' })]);
    await drain(t);
    t.clock.advance(6_000);
    await drain(t);
    const log = await deliveryLog(t, owner, base, hook.id);
    expect(log.total_count).toBe(2);
    const [newest, oldest] = log.delivery_list;
    expect(newest).toMatchObject({ kind: 'event', status: 'succeeded', attempt_count: 1, last_status_code: 200, last_error: null, next_attempt_at: '' });
    expect(oldest).toMatchObject({ kind: 'event', status: 'succeeded', attempt_count: 2, last_status_code: 200 });
    expect(oldest!.attempts).toEqual([
      {
        attempt: 1,
        time: expect.stringMatching(/\+00:00$/),
        url: receiver.url(),
        status_code: 500,
        latency_ms: expect.any(Number),
        outcome: 'retry',
        error: 'HTTP 500',
        response_excerpt: 'boom',
        next_attempt_at: expect.stringMatching(/\+00:00$/),
      },
      {
        attempt: 2,
        time: expect.any(String),
        url: receiver.url(),
        status_code: 200,
        latency_ms: expect.any(Number),
        outcome: 'success',
        error: null,
        response_excerpt: 'ok',
        next_attempt_at: '',
      },
    ]);
    expect(oldest!.request_body).toBe(receiver.received[0]!.body);
    expect(JSON.stringify(log)).not.toContain('log-secret');
    const metrics = await t.container.metrics.registry.metrics();
    expect(metrics).toMatch(/basegate_webhook_attempts_total\{outcome="retry"\} [1-9]/);
    expect(metrics).toMatch(/basegate_webhook_attempts_total\{outcome="success"\} [1-9]/);
    expect(metrics).toMatch(/basegate_webhook_attempt_duration_seconds_count [1-9]/);

    const page2 = await deliveryLog(t, owner, base, hook.id, '?page=2&per_page=1');
    expect(page2.total_count).toBe(2);
    expect(page2.delivery_list.map((d) => d.id)).toEqual([oldest!.id]);
    const beyond = await deliveryLog(t, owner, base, hook.id, '?page=3&per_page=1');
    expect(beyond.delivery_list).toEqual([]);
    const junk = await deliveryLog(t, owner, base, hook.id, '?page=x&per_page=y');
    expect(junk.delivery_list).toHaveLength(2);
  });

  it('redelivers a delivery with the same body and webhook-id at the end of the queue', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status: 400, body: 'bad' });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const [failed] = (await deliveryLog(t, owner, base, hook.id)).delivery_list;
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: 400 });

    const res = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/deliveries/${failed!.id}/redeliver/`), token: owner.token });
    expect(res.statusCode).toBe(200);
    const again = res.json().delivery;
    expect(again).toMatchObject({
      kind: 'redelivery',
      status: 'pending',
      redelivery_of: failed!.id,
      webhook_msg_id: failed!.webhook_msg_id,
      event_id: failed!.event_id,
      attempt_count: 0,
      attempts: [],
    });
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    const log = await deliveryLog(t, owner, base, hook.id);
    expect(log.delivery_list.map((d) => [d.kind, d.status])).toEqual([
      ['redelivery', 'succeeded'],
      ['event', 'failed'],
    ]);

    for (const id of ['999999', 'abc', '0']) {
      const missing = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/deliveries/${id}/redeliver/`), token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error_msg: 'Delivery not found.' });
    }
    // A delivery of another webhook is not found through this one.
    const otherHook = await createWebhook(t, owner, base, { url: receiver.url('/other') });
    const foreign = await t.request({ method: 'POST', url: basePath(base, `webhooks/${otherHook.id}/deliveries/${failed!.id}/redeliver/`), token: owner.token });
    expect(foreign.statusCode).toBe(404);
  });

  it('pings: one signed test event now, logged, never retried and never counted against the webhook', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url(), secret: 'ping-secret' });
    const ok = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/ping/`), token: owner.token });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().delivery).toMatchObject({ kind: 'ping', status: 'succeeded', attempt_count: 1, last_status_code: 200, attempts: [{ outcome: 'success' }] });
    const [ping] = receiver.received;
    expect(JSON.parse(ping!.body)).toEqual({
      event: 'ping',
      data: { dtable_uuid: base.uuid, webhook_id: hook.id, op_user: owner.virtualId, op_type: 'ping', op_time: t.clock.now() / 1000 },
    });
    expect(ping!.headers['x-seatable-signature']).toBe(`sha256=${hmac('sha256', 'ping-secret', ping!.body)}`);

    receiver.reply = () => ({ status: 503 });
    const failed = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/ping/`), token: owner.token });
    expect(failed.statusCode).toBe(200);
    expect(failed.json().delivery).toMatchObject({ kind: 'ping', status: 'failed', last_status_code: 503, attempts: [{ outcome: 'failed', next_attempt_at: '' }] });
    t.clock.advance(3_600_000);
    expect(await drain(t)).toBe(0);
    expect(receiver.received).toHaveLength(2);
    const row = await t.container.db.selectFrom('webhooks').select(['failure_streak', 'is_valid']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(Number(row.failure_streak)).toBe(0);
    expect(Number(row.is_valid)).toBe(1);
  });
});
