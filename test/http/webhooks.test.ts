import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

function multipart(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  const boundary = 'WebhookBoundary42';
  const payload =
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') + `--${boundary}--\r\n`;
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe.each(DIALECTS)('webhooks CRUD (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let writer: TestUser;
  let stranger: TestUser;
  let base: TestBase;

  beforeAll(async () => {
    // LOG_LEVEL only matters for the logging app of the last test; the main app logs nothing.
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'trace' });
    owner = await createUser(t);
    admin = await createUser(t);
    writer = await createUser(t);
    stranger = await createUser(t);
    base = await createBase(t, owner, 'Hook base');
    for (const [user, permission] of [
      [admin, 'admin'],
      [writer, 'rw'],
    ] as const) {
      const res = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: user.email, permission } });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(() => t?.close());

  const hooks = () => basePath(base, 'webhooks/');

  it('creates from multipart with a secret: 200 {webhook} in the record shape, secret masked', async () => {
    const form = multipart({ url: 'https://example.com/multipart', secret: 'top-secret-value' });
    const res = await t.request({ method: 'POST', url: hooks(), token: owner.token, ...form });
    expect(res.statusCode).toBe(200);
    const webhook = res.json().webhook;
    expect(webhook).toEqual({
      id: expect.any(Number),
      dtable_uuid: base.uuid,
      url: 'https://example.com/multipart',
      creator: owner.virtualId,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/),
      is_valid: true,
      settings: { secret: '********' },
    });
    expect(res.body).not.toContain('top-secret-value');
  });

  it('creates from a form body and from JSON; without a secret the settings are empty', async () => {
    const form = await t.request({
      method: 'POST',
      url: hooks(),
      token: owner.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `url=${encodeURIComponent('http://example.com/form')}`,
    });
    expect(form.statusCode).toBe(200);
    expect(form.json().webhook.settings).toEqual({});
    const json = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://example.com/json', secret: 12345 } });
    expect(json.statusCode).toBe(200);
    expect(json.json().webhook.settings).toEqual({ secret: '********' });
  });

  it('lists the base webhooks in creation order and never shows a secret', async () => {
    const res = await t.request({ method: 'GET', url: hooks(), token: owner.token });
    expect(res.statusCode).toBe(200);
    const list = res.json().webhook_list as Array<{ url: string; id: number }>;
    expect(list.map((w) => w.url)).toEqual(['https://example.com/multipart', 'http://example.com/form', 'https://example.com/json']);
    expect(list.map((w) => w.id)).toEqual([...list.map((w) => w.id)].sort((a, b) => a - b));
    expect(res.body).not.toContain('top-secret-value');
    expect(res.body).not.toContain('12345');
    // Without the trailing slash too.
    const bare = await t.request({ method: 'GET', url: hooks().slice(0, -1), token: owner.token });
    expect(bare.json()).toEqual(res.json());
  });

  it('refuses the same URL twice on one base with 409 Webhook exists.', async () => {
    const res = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://example.com/json' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error_msg: 'Webhook exists.' });
  });

  it('allows the same URL on another base', async () => {
    const other = await createBase(t, owner);
    const res = await t.request({ method: 'POST', url: basePath(other, 'webhooks/'), token: owner.token, payload: { url: 'https://example.com/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook.dtable_uuid).toBe(other.uuid);
  });

  it.each([
    [{}, 'url is required.'],
    [{ url: '' }, 'url is required.'],
    [{ url: '   ' }, 'url is required.'],
    [{ url: 42 }, 'url invalid.'],
    [{ url: ['https://a.example'] }, 'url invalid.'],
    [{ url: 'ftp://example.com/x' }, 'url invalid: it must start with http:// or https://.'],
    [{ url: 'example.com/hook' }, 'url invalid: it must start with http:// or https://.'],
    [{ url: 'javascript:alert(1)' }, 'url invalid: it must start with http:// or https://.'],
    [{ url: 'https://exa mple.com/' }, 'url invalid: it contains white space.'],
    [{ url: 'http://' }, 'url invalid.'],
    [{ url: 'https://[::1' }, 'url invalid.'],
    [{ url: `https://example.com/${'a'.repeat(1982)}` }, 'url is too long (at most 2000 characters).'],
    [{ url: 'https://example.com/ok', secret: { nested: true } }, 'secret invalid: it must be a string.'],
    [{ url: 'https://example.com/ok', secret: 'x'.repeat(1001) }, 'secret is too long (at most 1000 characters).'],
  ])('refuses a bad body %j with 400', async (payload, message) => {
    const res = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: message });
  });

  it('accepts a URL of exactly 2000 characters', async () => {
    const url = `https://example.com/${'b'.repeat(1980)}`;
    expect(url).toHaveLength(2000);
    const res = await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url } });
    expect(res.statusCode).toBe(200);
    await t.request({ method: 'DELETE', url: `${hooks()}${res.json().webhook.id}/`, token: owner.token });
  });

  it('lets a base admin manage webhooks; rw users and strangers get 403; unknown base 404', async () => {
    const byAdmin = await t.request({ method: 'POST', url: hooks(), token: admin.token, payload: { url: 'https://example.com/by-admin' } });
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json().webhook.creator).toBe(admin.virtualId);
    for (const user of [writer, stranger]) {
      for (const [method, url] of [
        ['GET', hooks()],
        ['POST', hooks()],
        ['PUT', `${hooks()}${byAdmin.json().webhook.id}/`],
        ['DELETE', `${hooks()}${byAdmin.json().webhook.id}/`],
        ['GET', `${hooks()}${byAdmin.json().webhook.id}/deliveries/`],
        ['POST', `${hooks()}${byAdmin.json().webhook.id}/ping/`],
      ] as const) {
        const res = await t.request({ method, url, token: user.token, payload: { url: 'https://example.com/nope' } });
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Permission denied.' });
      }
    }
    const missing = await t.request({ method: 'GET', url: basePath({ ...base, name: 'No such base' }, 'webhooks/'), token: owner.token });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error_msg: 'dtable No such base not found.' });
    const noWorkspace = await t.request({ method: 'GET', url: basePath({ ...base, workspaceId: 999999 }, 'webhooks/'), token: owner.token });
    expect(noWorkspace.statusCode).toBe(404);
  });

  it('requires an Account-Token', async () => {
    const none = await t.request({ method: 'GET', url: hooks() });
    expect(none.statusCode).toBe(403);
    expect(none.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    const bad = await t.request({ method: 'GET', url: hooks(), token: 'f'.repeat(40) });
    expect(bad.statusCode).toBe(401);
  });

  it('updates url and secret (multipart); the masked secret sent back keeps the secret; 409 on a clash', async () => {
    const created = (await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://example.com/before', secret: 's1' } })).json()
      .webhook;
    const form = multipart({ url: 'https://example.com/after', secret: 'second-secret' });
    const res = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, ...form });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook).toMatchObject({ id: created.id, url: 'https://example.com/after', settings: { secret: '********' }, is_valid: true });
    const stored = await t.container.db.selectFrom('webhooks').select('secret').where('id', '=', created.id).executeTakeFirstOrThrow();
    const box = new (await import('../../src/modules/webhooks/secret-box.js')).SecretBox(t.config.secretKey);
    expect(stored.secret).not.toContain('second-secret');
    expect(box.open(stored.secret!)).toBe('second-secret');

    const masked = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, payload: { secret: '********' } });
    expect(masked.statusCode).toBe(200);
    const after = await t.container.db.selectFrom('webhooks').select('secret').where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(box.open(after.secret!)).toBe('second-secret');

    const clash = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, payload: { url: 'https://example.com/json' } });
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toEqual({ error_msg: 'Webhook exists.' });

    const bad = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, payload: { url: 'gopher://x' } });
    expect(bad.statusCode).toBe(400);

    const cleared = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, payload: { secret: '' } });
    expect(cleared.json().webhook.settings).toEqual({});
  });

  it('re-enables an invalid webhook when it is saved, even unchanged', async () => {
    const created = (await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://example.com/disabled' } })).json().webhook;
    await t.container.db
      .updateTable('webhooks')
      .set({ is_valid: 0, failure_streak: 5, invalid_reason: 'test' })
      .where('id', '=', created.id)
      .execute();
    const listed = (await t.request({ method: 'GET', url: hooks(), token: owner.token })).json().webhook_list;
    expect(listed.find((w: { id: number }) => w.id === created.id).is_valid).toBe(false);
    const res = await t.request({ method: 'PUT', url: `${hooks()}${created.id}/`, token: owner.token, ...multipart({}) });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhook.is_valid).toBe(true);
    const row = await t.container.db.selectFrom('webhooks').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(Number(row.failure_streak)).toBe(0);
    expect(row.invalid_reason).toBeNull();
  });

  it('deletes; unknown, malformed or foreign ids are 404 Webhook not found.', async () => {
    const created = (await t.request({ method: 'POST', url: hooks(), token: owner.token, payload: { url: 'https://example.com/delete-me' } })).json().webhook;
    const res = await t.request({ method: 'DELETE', url: `${hooks()}${created.id}/`, token: owner.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const other = await createBase(t, owner);
    const foreign = (await t.request({ method: 'POST', url: basePath(other, 'webhooks/'), token: owner.token, payload: { url: 'https://example.com/f' } })).json()
      .webhook;
    for (const id of [String(created.id), '0', '-1', 'abc', '99999999', String(foreign.id)]) {
      for (const method of ['PUT', 'DELETE'] as const) {
        const again = await t.request({ method, url: `${hooks()}${id}/`, token: owner.token, payload: { url: 'https://example.com/z' } });
        expect(again.statusCode, `${method} ${id}`).toBe(404);
        expect(again.json()).toEqual({ error_msg: 'Webhook not found.' });
      }
      for (const suffix of ['deliveries/', 'ping/', 'deliveries/1/redeliver/']) {
        const method = suffix === 'deliveries/' ? 'GET' : 'POST';
        const sub = await t.request({ method, url: `${hooks()}${id}/${suffix}`, token: owner.token });
        expect(sub.statusCode, `${method} ${id}/${suffix}`).toBe(404);
        expect(sub.json()).toEqual({ error_msg: 'Webhook not found.' });
      }
    }
  });

  it('purging a deleted base from the trash deletes its webhooks', async () => {
    const doomed = await createBase(t, owner);
    const created = (await t.request({ method: 'POST', url: basePath(doomed, 'webhooks/'), token: owner.token, payload: { url: 'https://example.com/d' } })).json()
      .webhook;
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${doomed.workspaceId}/dtable/`, token: owner.token, payload: { name: doomed.name } });
    expect(del.statusCode).toBe(200);
    const kept = await t.container.db.selectFrom('webhooks').select('id').where('id', '=', created.id).executeTakeFirst();
    expect(kept).toBeDefined();
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/trash-dtables/', token: owner.token })).statusCode).toBe(200);
    const row = await t.container.db.selectFrom('webhooks').select('id').where('id', '=', created.id).executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('never writes a secret to the logs', async () => {
    const lines: string[] = [];
    const logged = await buildApp(t.container, { logStream: { write: (line) => void lines.push(line) } });
    await logged.ready();
    try {
      const auth = { authorization: `Token ${owner.token}` };
      const form = multipart({ url: 'https://example.com/logged', secret: 'first-logged-secret' });
      const created = await logged.inject({ method: 'POST', url: hooks(), headers: { ...auth, ...form.headers }, payload: form.payload });
      expect(created.statusCode).toBe(200);
      const id = created.json().webhook.id;
      await logged.inject({ method: 'PUT', url: `${hooks()}${id}/`, headers: auth, payload: { secret: 'second-logged-secret' } });
      await logged.inject({ method: 'GET', url: hooks(), headers: auth });
      await logged.inject({ method: 'POST', url: hooks(), headers: auth, payload: { url: 'bad', secret: 'third-logged-secret' } });
      expect(lines.length).toBeGreaterThan(3);
      const text = lines.join('');
      for (const secret of ['first-logged-secret', 'second-logged-secret', 'third-logged-secret']) expect(text).not.toContain(secret);
    } finally {
      await logged.close();
    }
  });
});
