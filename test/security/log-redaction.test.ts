import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('log redaction of params and query (%s)', (dialect) => {
  let t: TestApp;
  let app: FastifyInstance;
  let owner: TestUser;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect, { LOG_LEVEL: 'trace' });
    // A second app over the same container, logging everything into `lines`.
    app = await buildApp(t.container, { logStream: { write: (line) => void lines.push(line) } });
    await app.ready();
    owner = await createUser(t);
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  it('no external-link token, password or token reaches the log, whatever the spelling', async () => {
    const base = await createBase(t, owner);
    const created = await app.inject({
      method: 'POST',
      url: basePath(base, 'external-links/'),
      headers: { authorization: `Token ${owner.token}` },
      payload: { permission: 'r' },
    });
    expect(created.statusCode).toBe(200);
    const linkToken = created.json<{ token: string }>().token;
    expect(linkToken.length).toBeGreaterThan(8);
    const encodedLink = [...linkToken].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

    lines.length = 0;
    const urls = [
      `/api/v2.1/external-link-tokens/${linkToken}/access-token/`,
      `/api/v2.1/external-link-tokens/${encodedLink}/access-token/`,
      `/api/v2.1/external%2Dlink-tokens/${linkToken}/access-token/`,
      `/api/v2.1/external-link-tokens/${linkToken}/access-token/?pass%77ord=pw-secret-1`,
      `/api/v2.1/external-link-tokens/${linkToken}/access-token/?%70assword=pw-secret-2&PASSWORD[]=pw-secret-3`,
      `/api/v2.1/user/?access%5Ftoken=${owner.token}&tok%65n=tk-secret-4`,
      `${basePath(base, 'external-links/')}${linkToken}/`,
      `${basePath(base, 'external-links/')}${encodedLink}/`,
    ];
    for (const url of urls) await app.inject({ method: 'GET', url });
    await app.inject({ method: 'DELETE', url: `${basePath(base, 'external-links/')}${encodedLink}/`, headers: { authorization: `Token ${owner.token}` } });

    const text = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(urls.length * 2);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // The requests were logged (with their URLs), only the secrets are masked.
    expect(text).toContain('/access-token/');
    for (const secret of [linkToken, encodedLink, owner.token, 'pw-secret-1', 'pw-secret-2', 'pw-secret-3', 'tk-secret-4']) {
      expect(text, secret).not.toContain(secret);
    }
  });

  it('a password change body never reaches the log', async () => {
    lines.length = 0;
    const user = await createUser(t);
    await app.inject({
      method: 'PUT',
      url: '/api/v2.1/user/password/',
      headers: { authorization: `Token ${user.token}` },
      payload: { old_password: 'wrong-old-secret', new_password: 'new-secret-value' },
    });
    const text = lines.join('');
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of ['wrong-old-secret', 'new-secret-value', user.token]) expect(text, secret).not.toContain(secret);
  });
});
