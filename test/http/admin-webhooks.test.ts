import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const URL_PATH = '/api/v2.1/admin/webhooks/';

describe.each(DIALECTS)('admin: webhook health across the system (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let first: TestBase;
  let second: TestBase;
  let healthy: number;
  let failing: number;
  let disabled: number;

  const createHook = async (base: TestBase, url: string, secret?: string) => {
    const res = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: alice.token, payload: { url, ...(secret ? { secret } : {}) } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().webhook.id as number;
  };
  const delivery = (webhookId: number, baseId: number, status: 'pending' | 'succeeded' | 'failed', at: number, code: number | null) => ({
    webhook_id: webhookId,
    base_id: baseId,
    msg_id: `msg_${webhookId}_${at}`,
    kind: 'event' as const,
    body: '{}',
    status,
    next_attempt_at: at,
    last_status_code: code,
    last_error: status === 'failed' ? 'HTTP 500' : null,
    created_at: at,
    completed_at: status === 'pending' ? null : at + 5,
  });

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    admin = await createUser(t, { admin: true, name: 'Admin' });
    alice = await createUser(t, { name: 'Alice' });
    first = await createBase(t, alice, 'Hooks one');
    second = await createBase(t, alice, 'Hooks two');
    healthy = await createHook(first, 'https://example.com/healthy', 'top-secret-value');
    failing = await createHook(first, 'https://example.com/failing');
    disabled = await createHook(second, 'https://example.com/disabled');
    const db = t.container.db;
    const baseId = async (b: TestBase) => Number((await db.selectFrom('bases').select('id').where('uuid', '=', b.uuid).executeTakeFirstOrThrow()).id);
    const [one, two] = [await baseId(first), await baseId(second)];
    await db
      .insertInto('webhook_deliveries')
      .values([
        delivery(healthy, one, 'failed', 1000, 500),
        delivery(healthy, one, 'succeeded', 2000, 200),
        delivery(failing, one, 'succeeded', 1000, 200),
        delivery(failing, one, 'failed', 2000, 502),
        delivery(failing, one, 'failed', 3000, 503),
        delivery(failing, one, 'pending', 4000, null),
        delivery(failing, one, 'pending', 5000, null),
      ])
      .execute();
    await db.updateTable('webhooks').set({ failure_streak: 2 }).where('id', '=', failing).execute();
    await db.updateTable('webhooks').set({ is_valid: 0, failure_streak: 5, invalid_reason: 'Disabled after 5 failed deliveries.' }).where('id', '=', disabled).execute();
  });
  afterAll(() => t?.close());

  it('lists every webhook with its health: disabled first, then by failures in a row, secret never shown', async () => {
    const res = await t.request({ method: 'GET', url: URL_PATH, token: admin.token });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.count).toBe(3);
    expect(body.webhook_list.map((w: { id: number }) => w.id)).toEqual([disabled, failing, healthy]);
    const [off, bad, good] = body.webhook_list;
    expect(off).toMatchObject({ dtable_uuid: second.uuid, dtable_name: 'Hooks two', url: 'https://example.com/disabled', is_valid: false, invalid_reason: 'Disabled after 5 failed deliveries.', failure_streak: 5, failed_count: 0, backlog: 0, last_delivery: null });
    expect(bad).toMatchObject({ dtable_name: 'Hooks one', is_valid: true, failure_streak: 2, failed_count: 2, backlog: 2 });
    expect(bad.last_delivery).toMatchObject({ status: 'failed', last_status_code: 503, last_error: 'HTTP 500', kind: 'event' });
    expect(good).toMatchObject({ is_valid: true, failure_streak: 0, failed_count: 1, backlog: 0, creator: alice.virtualId, invalid_reason: null });
    expect(good.last_delivery).toMatchObject({ status: 'succeeded', last_status_code: 200, last_error: null });
    expect(good.last_delivery.completed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(res.body).not.toContain('top-secret-value');
  });

  it('pages with page and per_page', async () => {
    const page = async (q: string) => (await t.request({ method: 'GET', url: `${URL_PATH}?${q}`, token: admin.token })).json();
    expect((await page('page=2&per_page=2')).webhook_list.map((w: { id: number }) => w.id)).toEqual([healthy]);
    expect((await page('page=2&per_page=2')).count).toBe(3);
    expect((await page('page=3&per_page=2')).webhook_list).toEqual([]);
    expect((await page('per_page=x')).webhook_list).toHaveLength(3);
  });

  it('is for system admins only: a user gets 403, no credential is refused, and nothing is listed', async () => {
    const user = await t.request({ method: 'GET', url: URL_PATH, token: alice.token });
    expect(user.statusCode).toBe(403);
    // The same error body as the other admin endpoints give a non-admin.
    const other = await t.request({ method: 'GET', url: '/api/v2.1/admin/users/', token: alice.token });
    expect(user.json()).toEqual(other.json());
    expect(user.body).not.toContain('example.com');
    // Without a (valid) credential: the answer of every other admin endpoint, and nothing listed.
    for (const token of [undefined, 'not-a-token']) {
      const res = await t.request({ method: 'GET', url: URL_PATH, token });
      const other = await t.request({ method: 'GET', url: '/api/v2.1/admin/users/', token });
      expect([401, 403]).toContain(res.statusCode);
      expect(res.statusCode).toBe(other.statusCode);
      expect(res.json()).toEqual(other.json());
      expect(res.body).not.toContain('example.com');
    }
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/docs/openapi.json' })).json();
    expect(doc.paths[URL_PATH]?.get).toBeDefined();
    expect(doc.paths[URL_PATH].get.tags).toContain('admin');
  });
});
