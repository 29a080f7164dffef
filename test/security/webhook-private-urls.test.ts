import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/shared/crypto.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('webhook URLs with private addresses (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];

  beforeAll(async () => {
    t = await createTestApp(dialect); // WEBHOOK_ALLOW_PRIVATE defaults to false
    owner = await createUser(t);
    base = await createBase(t, owner);
    t.container.webhooks.deliverer.useLogger({
      error: () => undefined,
      warn: (obj, msg) => void warnings.push({ obj: obj as Record<string, unknown>, msg }),
    });
  });
  afterAll(() => t?.close());

  const hooks = () => basePath(base, 'webhooks/');
  const count = async () => (await t.request({ method: 'GET', url: hooks(), token: owner.token })).json().webhook_list.length as number;

  it('refuses literal loopback, private, link-local and metadata hosts at creation and update with 400', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://169.254.169.254/latest/', 'http://[::ffff:10.0.0.1]/', 'http://localhost/', 'http://0x7f.1/']) {
      const res = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error_msg, url).toMatch(/^url invalid: .* is refused \(.+\); set WEBHOOK_ALLOW_PRIVATE=true to allow it\.$/);
    }
    expect(await count()).toBe(0);

    const ok = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://hooks.example.com/in' } });
    expect(ok.statusCode).toBe(200);
    const id = ok.json().webhook.id as number;
    const moved = await t.request({ method: 'PUT', url: `${hooks()}${id}/`, token: owner.token, payload: { url: 'http://192.168.1.1/' } });
    expect(moved.statusCode).toBe(400);
    const list = (await t.request({ method: 'GET', url: hooks(), token: owner.token })).json().webhook_list;
    expect(list.map((w: { url: string }) => w.url)).toEqual(['https://hooks.example.com/in']);
  });

  it('the delivery-time guard still refuses (a webhook stored before the check) and logs it at warn level', async () => {
    const url = 'http://127.0.0.1:9/old-hook';
    const now = t.clock.now();
    const id = await t.container.db
      .insertInto('webhooks')
      .values({ base_id: base.id, url, url_hash: sha256Hex(url), secret: null, creator_id: owner.id, creator: owner.virtualId, created_at: now, updated_at: now, invalid_reason: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    warnings.length = 0;
    const ping = await t.request({ method: 'POST', url: `${hooks()}${Number(id.id)}/ping/`, token: owner.token });
    expect(ping.statusCode).toBeLessThan(500);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe('webhook delivery refused by the address guard');
    expect(String(warnings[0]!.obj.reason)).toMatch(/127\.0\.0\.1.*WEBHOOK_ALLOW_PRIVATE/);
  });
});

describe('webhook URLs with WEBHOOK_ALLOW_PRIVATE=true', () => {
  it('accepts a loopback receiver', async () => {
    const t = await createTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const owner = await createUser(t);
      const base = await createBase(t, owner);
      const res = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'http://127.0.0.1:8080/hook' } });
      expect(res.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
