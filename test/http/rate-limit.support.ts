import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, vi } from 'vitest';
import type { ManualClock } from '../../src/shared/clock.js';
import { createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

/**
 * rate-limiter-flexible's memory store reads Date.now(), so a test file calls this once to fake Date;
 * `limitedApp` and `advance` keep it equal to the app's ManualClock, so windows, Retry-After and
 * x-ratelimit-reset can be asserted to the second.
 */
export function fakeDateForRateLimits(): void {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterAll(() => {
    vi.useRealTimers();
  });
}

export async function limitedApp(dialect: 'sqlite' | 'postgres', env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp(dialect, env);
  vi.setSystemTime(t.clock.now());
  return t;
}

/** A rate-limited app with an admin, a user (alice) and two of her bases. */
export interface LimitedFixture {
  t: TestApp;
  admin: TestUser;
  alice: TestUser;
  a: TestBase;
  b: TestBase;
}

export async function limitedFixture(dialect: 'sqlite' | 'postgres', env: Record<string, string>): Promise<LimitedFixture> {
  const t = await limitedApp(dialect, env);
  const admin = await createUser(t, { admin: true });
  const alice = await createUser(t);
  return { t, admin, alice, a: await createBase(t, alice), b: await createBase(t, alice) };
}

export function advance(clock: ManualClock, ms: number): void {
  clock.advance(ms);
  vi.setSystemTime(clock.now());
}

export const gateway = (uuid: string, suffix = '') => `/api-gateway/api/v2/dtables/${uuid}/${suffix}`;
export const usage = (res: LightMyRequestResponse) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
});
export const NO_USAGE = { limit: undefined, remaining: undefined, reset: undefined };

/** `n` sequential requests; returns the status codes. */
export async function statuses(t: TestApp, n: number, options: Parameters<TestApp['request']>[0]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await t.request(options)).statusCode);
  return out;
}

/** Sends requests until the first 429 (at most `max`) and returns how many were let through. */
export async function allowedBefore429(t: TestApp, max: number, options: Parameters<TestApp['request']>[0]): Promise<number> {
  for (let i = 0; i < max; i++) {
    if ((await t.request(options)).statusCode === 429) return i;
  }
  return max;
}
