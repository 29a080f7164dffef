import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createTestApp, type TestApp } from '../helpers/index.js';

describe('structured logs', () => {
  let t: TestApp;
  let app: FastifyInstance;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await createTestApp('sqlite', { LOG_LEVEL: 'trace' });
    // A second app over the same container, logging everything into `lines`.
    app = await buildApp(t.container, { logStream: { write: (line) => void lines.push(line) } });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  it('carries the request id and never a password, token or link secret', async () => {
    const password = 'very-secret-password';
    await t.container.accounts.createUser({ email: 'log@example.com', password });
    const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'log@example.com', password } });
    const token = login.json<{ token: string }>().token;
    await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'log@example.com', password: 'wrong-secret-value' } });
    await app.inject({ method: 'GET', url: '/api/v2.1/user/', headers: { authorization: `Token ${token}`, 'x-request-id': 'req-42' } });
    await app.inject({ method: 'GET', url: '/api/v2.1/external-link-tokens/linksecret0123456789/access-token/?password=link-pass-secret' });

    const text = lines.join('');
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(text).toContain('"reqId":"req-42"');
    for (const secret of [password, token, 'wrong-secret-value', 'linksecret0123456789', 'link-pass-secret']) {
      expect(text, secret).not.toContain(secret);
    }
  });
});
