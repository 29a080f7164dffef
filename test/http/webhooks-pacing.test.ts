import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

interface Stats {
  deliveries_succeeded: number;
  deliveries_failed: number;
  success_rate: number | null;
  latency_ms: { p50: number | null; p99: number | null };
  backlog: number;
  backlog_capped: boolean;
  sampled: boolean;
  window: string;
  max_rate: number | null;
}

describe.each(DIALECTS)('webhook pacing and statistics (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    ({ base, receiver } = await freshTarget(t, owner));
    t.clock.set(1_800_000_000_000);
  });
  afterEach(() => receiver?.close());

  const put = (id: number, payload: Record<string, unknown>) =>
    t.request({ method: 'PUT', url: basePath(base, `webhooks/${id}/`), token: owner.token, payload });
  const stats = async (id: number, query = '') => {
    const res = await t.request({ method: 'GET', url: basePath(base, `webhooks/${id}/stats/${query}`), token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Stats>();
  };
  const countAt = (path: string) => receiver.received.filter((r) => r.path === path).length;

  it('max_rate is shown only when set, bounded, and removable', async () => {
    const plain = await createWebhook(t, owner, base, { url: receiver.url('/plain') });
    expect(plain).not.toHaveProperty('max_rate');
    const paced = await createWebhook(t, owner, base, { url: receiver.url('/paced'), max_rate: 2.5 });
    expect(paced).toMatchObject({ max_rate: 2.5 });
    for (const bad of [0, -1, 'fast', 5000, true, { n: 1 }]) {
      const res = await put(paced.id, { max_rate: bad });
      expect(res.statusCode, String(bad)).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    }
    const bad = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: receiver.url('/x'), max_rate: 0.001 } });
    expect(bad.statusCode).toBe(400);
    expect((await put(paced.id, { max_rate: '10' })).json<{ webhook: Record<string, unknown> }>().webhook).toMatchObject({ max_rate: 10 });
    // Saving without max_rate keeps it; null removes it.
    expect((await put(paced.id, { url: receiver.url('/paced') })).json<{ webhook: Record<string, unknown> }>().webhook).toMatchObject({ max_rate: 10 });
    expect((await put(paced.id, { max_rate: null })).json<{ webhook: Record<string, unknown> }>().webhook).not.toHaveProperty('max_rate');
  });

  it('a paced webhook gets its rate (a one-second burst, then one per interval) and others are not delayed', async () => {
    await createWebhook(t, owner, base, { url: receiver.url('/plain') });
    const paced = await createWebhook(t, owner, base, { url: receiver.url('/paced'), max_rate: 2 });
    await emit(t, Array.from({ length: 6 }, () => changeEvent(base)));
    const start = t.clock.now();

    await drain(t);
    expect(countAt('/plain')).toBe(6); // the unpaced webhook is not held back
    expect(countAt('/paced')).toBe(2); // bucket of one second's worth (2)
    // The loop sleeps until the bucket refills, not at once (no spinning on a due but paced queue).
    expect(await t.container.webhooks.delivery.nextDueAt()).toBe(start + 500);

    t.clock.set(start + 499);
    await drain(t);
    expect(countAt('/paced')).toBe(2);
    t.clock.set(start + 500);
    await drain(t);
    expect(countAt('/paced')).toBe(3);
    t.clock.set(start + 999);
    await drain(t);
    expect(countAt('/paced')).toBe(3);
    t.clock.set(start + 1000);
    await drain(t);
    expect(countAt('/paced')).toBe(4);
    expect((await stats(paced.id)).backlog).toBe(2);

    // After a long idle time the bucket holds one second's worth again, not more.
    t.clock.set(start + 60_000);
    await emit(t, Array.from({ length: 3 }, () => changeEvent(base)));
    await drain(t);
    expect(countAt('/paced')).toBe(6);
    // In queue order: the paced receiver saw its changes in commit order.
    const bodies = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.body);
    expect(bodies('/paced')).toEqual(bodies('/plain').slice(0, 6));
  });

  it('statistics: success rate, latency percentiles, backlog, window', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url('/s') });
    const empty = await stats(hook.id);
    expect(empty).toMatchObject({ deliveries_succeeded: 0, deliveries_failed: 0, success_rate: null, latency_ms: { p50: null, p99: null }, backlog: 0, window: 'hour', max_rate: null });

    // 4 answered 200, 1 answered 400 (a failure that is not retried).
    receiver.replies.push({ status: 200 }, { status: 200 }, { status: 400 }, { status: 200 }, { status: 200 });
    await emit(t, Array.from({ length: 5 }, () => changeEvent(base)));
    await drain(t);
    // Known response times for the percentile check: 10, 20, ..., 50 ms.
    const attempts = await t.container.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select('a.id')
      .where('d.webhook_id', '=', hook.id)
      .orderBy('a.id')
      .execute();
    expect(attempts).toHaveLength(5);
    for (const [i, a] of attempts.entries()) await t.container.db.updateTable('webhook_attempts').set({ duration_ms: (i + 1) * 10 }).where('id', '=', a.id).execute();

    const hour = await stats(hook.id, '?window=hour');
    expect(hour).toMatchObject({ deliveries_succeeded: 4, deliveries_failed: 1, success_rate: 0.8, latency_ms: { p50: 30, p99: 50 }, backlog: 0, sampled: false, backlog_capped: false });

    // Pending deliveries are the backlog (queued, no delivery round ran).
    await emit(t, Array.from({ length: 3 }, () => changeEvent(base)));
    expect((await stats(hook.id)).backlog).toBe(3);

    // Two hours later the hour window is empty, the day window still counts them.
    t.clock.set(t.clock.now() + 2 * 3_600_000);
    expect(await stats(hook.id)).toMatchObject({ deliveries_succeeded: 0, deliveries_failed: 0, success_rate: null });
    expect(await stats(hook.id, '?window=day')).toMatchObject({ deliveries_succeeded: 4, deliveries_failed: 1, window: 'day' });

    const bad = await t.request({ method: 'GET', url: basePath(base, `webhooks/${hook.id}/stats/?window=week`), token: owner.token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toHaveProperty('error_msg');
    const missing = await t.request({ method: 'GET', url: basePath(base, 'webhooks/999999/stats/'), token: owner.token });
    expect(missing.statusCode).toBe(404);
  });
});
