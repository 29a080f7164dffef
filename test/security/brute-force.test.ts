import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('brute force on passwords (%s)', (dialect) => {
  for (const edition of ['self-hosted', 'cloud']) {
    describe(edition, () => {
      let t: TestApp;
      let victim: TestUser;
      beforeAll(async () => {
        t = await createTestApp(dialect, { EDITION: edition, RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0' });
        victim = await createUser(t);
      });
      afterAll(() => t.close());

      const login = (username: string, password: string, ip = '10.0.0.1') =>
        t.app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username, password }, remoteAddress: ip });

      it('answers 429 with a growing Retry-After after repeated wrong passwords for one account, from any IP', async () => {
        for (let i = 0; i < 5; i++) expect((await login(victim.email, `wrong-${i}`, `10.0.1.${i}`)).statusCode).toBe(400);
        const blocked = await login(victim.email, victim.password, '10.0.1.99');
        expect(blocked.statusCode).toBe(429);
        expect(blocked.headers['retry-after']).toBe('1');
        expect(blocked.json().error_msg).toMatch(/Too many wrong passwords/);
        t.clock.advance(1000);
        expect((await login(victim.email, 'wrong-again', '10.0.1.98')).statusCode).toBe(400);
        const longer = await login(victim.email, victim.password, '10.0.1.97');
        expect(longer.statusCode).toBe(429);
        expect(longer.headers['retry-after']).toBe('2');
        t.clock.advance(2000);
        // The right password once the wait is over; success clears the account's count.
        expect((await login(victim.email, victim.password, '10.0.1.96')).statusCode).toBe(200);
        expect((await login(victim.email, 'wrong', '10.0.1.95')).statusCode).toBe(400);
      });

      it('limits one IP guessing across many accounts', async () => {
        const ip = '10.0.2.1';
        let first429 = -1;
        for (let i = 0; i < 30 && first429 < 0; i++) {
          const res = await login(`nobody-${i}@example.com`, 'guess', ip);
          if (res.statusCode === 429) first429 = i;
          else expect(res.statusCode).toBe(400);
        }
        expect(first429).toBe(20);
        // Another IP is not affected.
        expect((await login(victim.email, victim.password, '10.0.2.2')).statusCode).toBe(200);
      });

      it('limits external-link password guesses per link', async () => {
        const owner = await createUser(t);
        const base = await createBase(t, owner);
        const created = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: { password: 'link-password-1' } });
        const token = created.json().token as string;
        const exchange = (password: string, ip: string) =>
          t.app.inject({ method: 'GET', url: `/api/v2.1/external-link-tokens/${token}/access-token/`, headers: { 'x-link-password': password }, remoteAddress: ip });
        for (let i = 0; i < 5; i++) expect((await exchange(`wrong-${i}`, `10.0.3.${i}`)).statusCode).toBe(403);
        const blocked = await exchange('link-password-1', '10.0.3.50');
        expect(blocked.statusCode).toBe(429);
        expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
        t.clock.advance(1000);
        expect((await exchange('link-password-1', '10.0.3.51')).statusCode).toBe(200);
      });
    });
  }
});
