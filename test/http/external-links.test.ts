import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TEST_PUBLIC_URL, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('external links (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let reader: TestUser;
  let base: TestBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t, { email: 'owner@example.com' });
    reader = await createUser(t, { email: 'reader@example.com' });
    base = await createBase(t, owner, 'Linked base');
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: reader.email, permission: 'r' } });
  });
  afterAll(() => t.close());

  const links = (user: TestUser, method: 'GET' | 'POST', payload?: object) =>
    t.request({ method, url: basePath(base, 'external-links/'), token: user.token, ...(payload ? { payload } : {}) });

  it('creates a random link and lists it as read-only', async () => {
    const created = await links(owner, 'POST');
    expect(created.statusCode).toBe(200);
    const link = created.json();
    expect(link.token).toMatch(/^[0-9a-f]{20}$/);
    expect(link).toMatchObject({
      url: `${TEST_PUBLIC_URL}/dtable/external-links/${link.token}/`,
      is_custom: false,
      permission: 'read-only',
      is_expired: false,
      expire_date: '',
      password_protected: false,
    });
    // Stored hashed: listings show the token masked but for its last four characters.
    const list = await links(owner, 'GET');
    const masked = `${'*'.repeat(16)}${link.token.slice(-4)}`;
    expect(list.json().links.map((l: { token: string }) => l.token)).toContain(masked);
    expect(list.body).not.toContain(link.token);
    // A read-only collaborator may not see the tokens.
    expect((await links(reader, 'GET')).json()).toEqual({ error_msg: 'Permission denied.' });
  });

  it('creates a custom link with password and expiry that expires on time', async () => {
    const created = await links(owner, 'POST', { token: 'my-custom_link', password: 'secret-pass', expire_days: '2' });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({
      url: `${TEST_PUBLIC_URL}/dtable/external-links/custom/my-custom_link/`,
      is_custom: true,
      password_protected: true,
      is_expired: false,
    });
    expect(created.json().expire_date).not.toBe('');
    t.clock.advance(2 * 86_400_000 + 1);
    const later = (await links(owner, 'GET')).json().links.find((l: { token: string }) => l.token === '********link');
    expect(later.is_expired).toBe(true);
  });

  it('refuses bad tokens, passwords and expiry, and duplicate custom names', async () => {
    const cases: Array<[object, number]> = [
      [{ token: 'a b' }, 400],
      [{ token: 'abc' }, 400],
      [{ token: 'x'.repeat(101) }, 400],
      [{ token: '../../etc' }, 400],
      [{ password: 'short' }, 400],
      [{ expire_days: '0' }, 400],
      [{ expire_days: '-1' }, 400],
      [{ expire_days: 'soon' }, 400],
      [{ expire_days: 99999 }, 400],
      [{ token: 'my-custom_link' }, 409],
    ];
    for (const [payload, status] of cases) {
      const res = await links(owner, 'POST', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json()).toHaveProperty('error_msg');
    }
  });

  it('lets only owner and admins create and delete links', async () => {
    expect((await links(reader, 'POST')).json()).toEqual({ error_msg: 'Permission denied.' });
    const link = (await links(owner, 'POST')).json();
    const byReader = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${link.token}/`), token: reader.token });
    expect(byReader.statusCode).toBe(403);
    const del = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${link.token}/`), token: owner.token });
    expect(del.json()).toEqual({ success: true });
    const again = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${link.token}`), token: owner.token });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error_msg: `Token ${link.token} not found` });
  });

  it('does not delete another base\'s link through this base', async () => {
    const other = await createBase(t, owner, 'Other base');
    const foreign = (await t.request({ method: 'POST', url: basePath(other, 'external-links/'), token: owner.token })).json();
    const res = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${foreign.token}/`), token: owner.token });
    expect(res.statusCode).toBe(404);
    const stillThere = await t.request({ method: 'GET', url: basePath(other, 'external-links/'), token: owner.token });
    expect(stillThere.json().links.map((l: { token: string }) => l.token)).toContain(`${'*'.repeat(16)}${foreign.token.slice(-4)}`);
  });

  it('refuses strangers', async () => {
    const stranger = await createUser(t);
    expect((await links(stranger, 'GET')).statusCode).toBe(403);
  });
});
