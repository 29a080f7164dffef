import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createUser, type TestUser } from '../helpers/index.js';
import { fakeDateForRateLimits, limitedFixture, type LimitedFixture } from '../http/rate-limit.support.js';

fakeDateForRateLimits();

describe.each(DIALECTS)("a caller without access never spends a base's budget (%s)", (dialect) => {
  let f: LimitedFixture;
  let mallory: TestUser;
  let reader: TestUser;
  beforeAll(async () => {
    f = await limitedFixture(dialect, { RATE_LIMIT_ACCOUNT_PER_MINUTE: '6' });
    mallory = await createUser(f.t);
    reader = await createUser(f.t);
    await f.t.request({ method: 'POST', url: basePath(f.a, 'share/'), token: f.alice.token, payload: { email: reader.email, permission: 'r' } });
  });
  afterAll(() => f.t.close());

  it("answers a logged-in stranger 403 without touching the base's budget, and limits the stranger by IP", async () => {
    const { t, a, alice } = f;
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) codes.push((await t.request({ method: 'GET', url: basePath(a, 'api-tokens/'), token: mallory.token, remoteAddress: '10.9.0.1' })).statusCode);
    // Counted per IP: 6 answered 403, then the stranger's own 429s.
    expect(codes).toEqual([403, 403, 403, 403, 403, 403, 429, 429]);
    // The owner, from elsewhere, still has the base's whole budget.
    const owner: number[] = [];
    for (let i = 0; i < 7; i++) owner.push((await t.request({ method: 'GET', url: basePath(a, 'api-tokens/'), token: alice.token, remoteAddress: '10.9.0.2' })).statusCode);
    expect(owner).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  it("counts a collaborator's requests against the base", async () => {
    const { t, b } = f;
    // Base b is not shared with the reader: the reader's requests to it count per IP, not against b.
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'GET', url: basePath(b, 'api-tokens/'), token: reader.token, remoteAddress: '10.9.1.1' })).statusCode).toBe(403);
    for (let i = 0; i < 6; i++) expect((await t.request({ method: 'GET', url: basePath(b, 'api-tokens/'), token: f.alice.token, remoteAddress: '10.9.1.2' })).statusCode).toBe(200);
  });
});
