import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, type TestApp, type TestUser } from '../helpers/index.js';
import { changeEvent, createWebhook, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

/** Issue 17 item 2: webhook fan-out is bounded per base and per webhook. */
describe.each(DIALECTS)('webhook fan-out limits (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_MAX_PER_BASE: '3', WEBHOOK_MAX_BACKLOG: '10' }));
  });
  afterAll(() => t.close());

  it('refuses a webhook past WEBHOOK_MAX_PER_BASE with 400 and creates nothing', async () => {
    const base = await createBase(t, owner);
    const hooks = [];
    for (let i = 0; i < 3; i++) hooks.push(await createWebhook(t, owner, base, { url: `https://example.com/h${i}` }));
    const res = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'https://example.com/h3' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'A base can have at most 3 webhooks.' });
    const count = await t.container.db.selectFrom('webhooks').select('id').where('base_id', '=', base.id).execute();
    expect(count).toHaveLength(3);
    const removed = await t.request({ method: 'DELETE', url: basePath(base, `webhooks/${hooks[0]!.id}/`), token: owner.token });
    expect(removed.statusCode).toBe(200);
    await createWebhook(t, owner, base, { url: 'https://example.com/h3' });
  });

  it('pauses a webhook whose backlog would pass WEBHOOK_MAX_BACKLOG and tells its owner; others on the base go on', async () => {
    const { base, receiver } = await freshTarget(t, owner);
    try {
      const stuck = await createWebhook(t, owner, base, { url: receiver.url('/stuck') });
      const healthy = await createWebhook(t, owner, base, { url: receiver.url('/healthy') });
      await emit(t, Array.from({ length: 8 }, () => changeEvent(base)));
      // /healthy drains; /stuck keeps its 8 (its receiver is never reached in this test).
      await t.container.db.updateTable('webhook_deliveries').set({ next_attempt_at: t.clock.now() + 3_600_000 }).where('webhook_id', '=', stuck.id).execute();
      await drain(t);
      await emit(t, Array.from({ length: 5 }, () => changeEvent(base)));
      const pending = (id: number) =>
        t.container.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).where('status', '=', 'pending').execute();
      expect(await pending(stuck.id)).toHaveLength(8); // nothing past the cap was queued
      expect(await pending(healthy.id)).toHaveLength(5);
      const list = await t.request({ method: 'GET', url: basePath(base, 'webhooks/'), token: owner.token });
      const records = list.json<{ webhook_list: Array<{ id: number; is_valid: boolean }> }>().webhook_list;
      expect(records.find((w) => w.id === stuck.id)!.is_valid).toBe(false);
      expect(records.find((w) => w.id === healthy.id)!.is_valid).toBe(true);
      const alerts = await t.container.db.selectFrom('webhook_alerts').select(['user_id', 'reason']).where('webhook_id', '=', stuck.id).execute();
      expect(alerts).toHaveLength(1);
      expect(alerts[0]!.reason).toContain('More than 10 deliveries');
      const notices = await t.container.db.selectFrom('notifications').select('msg_type').where('user_id', '=', owner.id).execute();
      expect(notices.map((n) => n.msg_type)).toContain('webhook_invalid');
    } finally {
      await receiver.close();
    }
  });

  it('stores the body of each event once, referenced by the deliveries of every webhook', async () => {
    const { base, receiver } = await freshTarget(t, owner);
    try {
      for (const p of ['/a', '/b', '/c']) await createWebhook(t, owner, base, { url: receiver.url(p) });
      const events = [changeEvent(base), changeEvent(base)];
      await emit(t, events);
      const queued = await t.container.db
        .selectFrom('webhook_deliveries')
        .select(['body', 'payload_id', 'event_id'])
        .where('base_id', '=', base.id)
        .execute();
      expect(queued).toHaveLength(6);
      expect(queued.every((d) => d.body === '' && d.payload_id !== null)).toBe(true);
      const payloadIds = new Set(queued.map((d) => Number(d.payload_id)));
      expect(payloadIds.size).toBe(2);
      await drain(t);
      expect(receiver.received).toHaveLength(6);
      for (const e of events) {
        const bodies = receiver.received.filter((r) => JSON.parse(r.body).data.row_id === e.rowId).map((r) => r.body);
        expect(bodies).toHaveLength(3);
        expect(new Set(bodies).size).toBe(1); // the same bytes to every webhook
      }
    } finally {
      await receiver.close();
    }
  });
});
