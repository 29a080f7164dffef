import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sha256Hex } from '../../src/shared/crypto.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, deliveryLog, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DEFAULT_SCHEDULE = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function webhookRow(t: TestApp, id: number) {
  return t.container.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe.each(DIALECTS)('webhook retries and the disable policy (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_LANES: '1' }));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    ({ base, receiver } = await freshTarget(t, owner));
  });
  afterEach(() => receiver?.close());

  const pendingDelivery = async (webhookId: number) => (await deliveryLog(t, owner, base, webhookId)).delivery_list[0]!;

  it('retries 5xx on the default schedule (±10 % jitter), with the same webhook-id, then gives up', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.reply = () => ({ status: 503, body: 'unavailable' });
    await emit(t, [changeEvent(base)]);
    expect(await drain(t)).toBe(1);
    for (let retry = 0; retry < DEFAULT_SCHEDULE.length; retry++) {
      const delivery = await pendingDelivery(hook.id);
      expect(delivery.status).toBe('pending');
      const wait = Date.parse(delivery.next_attempt_at) - t.clock.now();
      const delay = DEFAULT_SCHEDULE[retry]!;
      expect(wait).toBeGreaterThanOrEqual(Math.floor(delay * 0.9));
      expect(wait).toBeLessThanOrEqual(Math.ceil(delay * 1.1));
      // Not before it is due…
      t.clock.advance(wait - 1);
      await drain(t);
      expect(receiver.received).toHaveLength(retry + 1);
      // …and exactly when it is.
      t.clock.advance(1);
      await drain(t);
      expect(receiver.received).toHaveLength(retry + 2);
    }
    const done = await pendingDelivery(hook.id);
    expect(done).toMatchObject({ status: 'failed', attempt_count: 8, last_status_code: 503 });
    expect(done.last_error).toBe('HTTP 503; gave up after 8 attempts');
    expect(done.attempts.map((a) => a.outcome)).toEqual([...Array(7).fill('retry'), 'failed']);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-timestamp'])).size).toBe(8);
    // One exhausted delivery counts once towards the disable policy.
    expect(Number((await webhookRow(t, hook.id)).failure_streak)).toBe(1);
    t.clock.advance(48 * HOUR);
    await drain(t);
    expect(receiver.received).toHaveLength(8);
  });

  it.each([408, 429, 500, 502])('retries HTTP %i', async (status) => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    expect(await pendingDelivery(hook.id)).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: status, last_error: `HTTP ${status}` });
    t.clock.advance(6 * SECOND);
    await drain(t);
    expect(await pendingDelivery(hook.id)).toMatchObject({ status: 'succeeded', attempt_count: 2 });
  });

  it.each([400, 401, 403, 404, 422])('does not retry HTTP %i', async (status) => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status, body: 'nope' });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    expect(await pendingDelivery(hook.id)).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: status, last_error: `HTTP ${status}: not retried` });
    t.clock.advance(24 * HOUR);
    await drain(t);
    expect(receiver.received).toHaveLength(1);
  });

  it('does not follow redirects', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url('/hook') });
    receiver.replies.push({ status: 302, headers: { location: receiver.url('/elsewhere') } });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    const delivery = await pendingDelivery(hook.id);
    expect(delivery).toMatchObject({ status: 'failed', last_status_code: 302 });
    expect(delivery.last_error).toBe(`HTTP 302: redirect to ${receiver.url('/elsewhere')} not followed`);
  });

  it('honours Retry-After in seconds and as an HTTP date, never retrying earlier', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status: 429, headers: { 'retry-after': '120' } });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const first = await pendingDelivery(hook.id);
    expect(Date.parse(first.next_attempt_at) - t.clock.now()).toBe(120 * SECOND);
    t.clock.advance(119 * SECOND);
    await drain(t);
    expect(receiver.received).toHaveLength(1);
    const retryAt = new Date(t.clock.now() + SECOND + 3 * HOUR).toUTCString(); // whole seconds
    receiver.replies.push({ status: 503, headers: { 'retry-after': retryAt } });
    t.clock.advance(SECOND);
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    const second = await pendingDelivery(hook.id);
    // The schedule says ~5 min; the receiver asked for about 3 h.
    expect(Date.parse(second.next_attempt_at)).toBe(Date.parse(retryAt));
    expect(Date.parse(retryAt) - t.clock.now()).toBeGreaterThan(3 * HOUR - SECOND);
    t.clock.set(Date.parse(retryAt) - 1);
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    t.clock.advance(1);
    await drain(t);
    expect(receiver.received).toHaveLength(3);
    expect((await pendingDelivery(hook.id)).status).toBe('succeeded');
  });

  it('retries a refused connection and a timeout; one connection error never disables', async () => {
    const port = await closedPort();
    const refused = await createWebhook(t, owner, base, { url: `http://127.0.0.1:${port}/x` });
    const slow = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ hang: true });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const connection = await pendingDelivery(refused.id);
    expect(connection).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: null });
    expect(connection.last_error).toMatch(/^connection failed: .*ECONNREFUSED/);
    expect((await webhookRow(t, refused.id)).is_valid).toBe(1);
    const timedOut = await pendingDelivery(slow.id);
    expect(timedOut).toMatchObject({ status: 'pending', attempt_count: 1, last_error: 'no complete response within 300 ms' });
    t.clock.advance(6 * SECOND);
    await drain(t);
    expect((await pendingDelivery(slow.id)).status).toBe('succeeded');
  });

  it('keeps at most 64 KiB of a response', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status: 200, body: 'é'.repeat(100_000) });
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const delivery = await pendingDelivery(hook.id);
    expect(delivery.status).toBe('succeeded');
    expect(Buffer.byteLength(delivery.attempts[0]!.response_excerpt!, 'utf8')).toBe(64 * 1024);
  });

  it('disables on 410 Gone at once, alerts the owner, sends nothing until saved again', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url() });
    receiver.replies.push({ status: 410 });
    await emit(t, [changeEvent(base), changeEvent(base)]);
    await drain(t);
    expect(receiver.received).toHaveLength(1);
    const row = await webhookRow(t, hook.id);
    expect(row.is_valid).toBe(0);
    expect(row.invalid_reason).toBe('The receiver answered 410 Gone.');
    const list = (await t.request({ method: 'GET', url: basePath(base, 'webhooks/'), token: owner.token })).json().webhook_list;
    expect(list[0].is_valid).toBe(false);
    const alerts = await t.container.webhooks.service.alertsFor(owner.id);
    expect(alerts[0]).toMatchObject({ webhook_id: hook.id, base_id: base.id, url: receiver.url(), reason: 'The receiver answered 410 Gone.' });
    // …and in the owner's inbox (GET /api/v2.1/notifications/).
    const inbox = await t.request({ method: 'GET', url: '/api/v2.1/notifications/', token: owner.token });
    const notices = JSON.stringify(inbox.json());
    expect(inbox.statusCode).toBe(200);
    expect(notices).toContain('"msg_type":"webhook_invalid"');
    expect(notices).toContain(`"webhook_id":${hook.id}`);
    expect(notices).toContain(base.uuid);

    // While invalid: the queued delivery waits, new events are not queued.
    await emit(t, [changeEvent(base)]);
    t.clock.advance(HOUR);
    await drain(t);
    expect(receiver.received).toHaveLength(1);
    const log = await deliveryLog(t, owner, base, hook.id);
    expect(log.delivery_list.map((d) => d.status)).toEqual(['pending', 'failed']);

    const saved = await t.request({ method: 'PUT', url: basePath(base, `webhooks/${hook.id}/`), token: owner.token, payload: {} });
    expect(saved.json().webhook.is_valid).toBe(true);
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    await emit(t, [changeEvent(base)]);
    await drain(t);
    expect(receiver.received).toHaveLength(3);
  });
});

describe.each(DIALECTS)('webhook disable after repeated failures (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    // One retry after 1 s: a delivery is exhausted after two attempts.
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '1s', WEBHOOK_LANES: '1' });
    owner = await createUser(t);
    admin = await createUser(t);
    base = await createBase(t, owner);
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: admin.email, permission: 'admin' } });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function settle() {
    for (let i = 0; i < 20; i++) {
      await drain(t);
      t.clock.advance(2 * SECOND);
    }
  }

  it('a success resets the streak; five exhausted deliveries in a row disable; saving re-enables', async () => {
    const hook = await createWebhook(t, admin, base, { url: receiver.url() });
    receiver.reply = (request) => (JSON.parse(request.body).data.row_name === 'good' ? { status: 200 } : { status: 500 });
    await emit(t, [...Array.from({ length: 4 }, () => changeEvent(base)), changeEvent(base, { rowName: 'good' })]);
    await settle();
    expect(receiver.received).toHaveLength(9);
    let row = await webhookRow(t, hook.id);
    expect(row.is_valid).toBe(1);
    expect(Number(row.failure_streak)).toBe(0);

    await emit(t, Array.from({ length: 4 }, () => changeEvent(base)));
    await settle();
    row = await webhookRow(t, hook.id);
    expect(row.is_valid).toBe(1);
    expect(Number(row.failure_streak)).toBe(4);

    await emit(t, [changeEvent(base), changeEvent(base)]);
    await settle();
    row = await webhookRow(t, hook.id);
    expect(row.is_valid).toBe(0);
    expect(row.invalid_reason).toBe('5 deliveries in a row failed; the last: HTTP 500; gave up after 2 attempts.');
    const sent = receiver.received.length;
    expect(sent).toBe(9 + 8 + 2);
    // Owner and creator (a base admin) are both told, once, in the alert record and in their inbox.
    for (const user of [owner, admin]) {
      const alerts = await t.container.webhooks.service.alertsFor(user.id);
      expect(alerts.filter((a) => a.webhook_id === hook.id)).toHaveLength(1);
      const rows = await t.container.db.selectFrom('notifications').selectAll().where('user_id', '=', user.id).where('msg_type', '=', 'webhook_invalid').execute();
      expect(rows).toHaveLength(1);
      expect(JSON.parse(rows[0]!.detail)).toMatchObject({ webhook_id: hook.id, url: receiver.url(), reason: row.invalid_reason });
      expect(rows[0]!.dtable_uuid).toBe(base.uuid);
    }

    await emit(t, [changeEvent(base)]);
    await settle();
    expect(receiver.received).toHaveLength(sent);

    receiver.reply = () => ({ status: 200 });
    const res = await t.request({ method: 'PUT', url: basePath(base, `webhooks/${hook.id}/`), token: owner.token, payload: { url: receiver.url() } });
    expect(res.json().webhook.is_valid).toBe(true);
    await settle();
    // The delivery that was queued behind the fifth failure resumes; the event while invalid was never queued.
    expect(receiver.received).toHaveLength(sent + 1);
    row = await webhookRow(t, hook.id);
    expect(row.is_valid).toBe(1);
    expect(Number(row.failure_streak)).toBe(0);
  });
});

/**
 * A webhook written straight into the database: creation refuses literal private hosts, so this is
 * how a webhook stored before that check (or a name that resolves privately) reaches the delivery guard.
 */
async function storedWebhook(t: TestApp, owner: TestUser, base: TestBase, url: string): Promise<{ id: number }> {
  const now = t.clock.now();
  const { id } = await t.container.db
    .insertInto('webhooks')
    .values({ base_id: base.id, url, url_hash: sha256Hex(url), secret: null, creator_id: owner.id, creator: owner.virtualId, created_at: now, updated_at: now, invalid_reason: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: Number(id) };
}

describe.each(DIALECTS)('webhook SSRF guard (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createTestApp(dialect); // WEBHOOK_ALLOW_PRIVATE defaults to false
    owner = await createUser(t);
    base = await createBase(t, owner);
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it.each([
    ['http://127.0.0.1:{port}/hook', 'refused: 127.0.0.1 resolves to 127.0.0.1 (loopback address)'],
    ['http://localhost:{port}/hook', 'refused: localhost resolves to '],
    ['http://[::1]:{port}/hook', 'refused: [::1] resolves to ::1 (loopback address)'],
    ['http://[::ffff:127.0.0.1]:{port}/hook', '(loopback address)'],
    ['http://169.254.169.254/latest/meta-data/', '(cloud metadata address)'],
    ['http://10.1.2.3:{port}/', '(private address)'],
    ['http://192.168.1.1/', '(private address)'],
    ['http://[fd00::1]/', '(unique-local address)'],
    ['http://[fe80::1]/', '(link-local address)'],
    ['http://0.0.0.0:{port}/', '(unspecified address)'],
  ])('refuses %s and logs why, without retrying', async (template, message) => {
    const url = template.replace('{port}', String(receiver.port));
    const hook = await storedWebhook(t, owner, base, url);
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const [delivery] = (await deliveryLog(t, owner, base, hook.id)).delivery_list;
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: null });
    expect(delivery!.last_error).toContain(message);
    expect(delivery!.last_error).toContain('set WEBHOOK_ALLOW_PRIVATE=true to allow');
    expect(receiver.received).toHaveLength(0);
    await t.request({ method: 'DELETE', url: basePath(base, `webhooks/${hook.id}/`), token: owner.token });
  });

  it('refuses a ping to a private address too', async () => {
    const hook = await storedWebhook(t, owner, base, receiver.url());
    const res = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/ping/`), token: owner.token });
    expect(res.json().delivery).toMatchObject({ status: 'failed', last_error: expect.stringContaining('(loopback address)') });
    expect(receiver.received).toHaveLength(0);
  });
});

describe.each(DIALECTS)('webhook delivery log retention (%s)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETENTION_DAYS: '30' });
  });
  afterAll(() => t?.close());

  it('prunes finished deliveries older than the retention period and keeps pending ones', async () => {
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    const receiver = await new Receiver().start();
    try {
      const hook = await createWebhook(t, owner, base, { url: receiver.url() });
      receiver.replies.push({ status: 200 }, { status: 400 }, { status: 503 });
      await emit(t, [changeEvent(base), changeEvent(base), changeEvent(base)]);
      await drain(t);
      t.clock.advance(30 * 24 * HOUR - 1);
      // Nothing is old enough yet.
      expect(await t.container.webhooks.prune()).toBe(0);
      t.clock.advance(2);
      // The 503 is still queued for its retry: pending deliveries are never pruned.
      // The scheduler's daily tick runs the same prune.
      expect(t.container.scheduler.tickNames()).toContain('webhook-log-prune');
      expect(await t.container.scheduler.runOnce('webhook-log-prune')).toEqual({ ran: true, result: 2 });
      const left = await deliveryLog(t, owner, base, hook.id);
      expect(left.delivery_list.map((d) => d.status)).toEqual(['pending']);
      const attempts = await t.container.db.selectFrom('webhook_attempts').select('delivery_id').execute();
      expect(attempts.map((a) => Number(a.delivery_id))).toEqual([left.delivery_list[0]!.id]);
    } finally {
      await receiver?.close();
    }
  });
});
