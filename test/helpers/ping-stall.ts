import { expect } from 'vitest';
import type { TestApp } from './app.js';

/**
 * A stall of seconds: the margin by which the longest `/ping/` wait during an attack may exceed the
 * longest wait without it, measured in the same run (wide, so a loaded machine does not make it flaky).
 */
export const STALL_MS = 3000;

/** The longest wait of `/ping/`, asked one after another from a client of its own, while `work` runs. */
export async function longestPingDuring<T>(t: TestApp, work: () => Promise<T>): Promise<{ longestMs: number; result: T }> {
  let done = false;
  let longestMs = 0;
  const pinger = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await t.request({ method: 'GET', url: '/ping/' });
      expect(res.statusCode).toBe(200);
      longestMs = Math.max(longestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  let result: T;
  try {
    // The pinger's first request is under way before the work starts.
    await new Promise((resolve) => setImmediate(resolve));
    result = await work();
  } finally {
    done = true;
    // The ping in flight when the work ends counts too (it may be the one that waited).
    await pinger;
  }
  return { longestMs, result };
}

/**
 * Runs `attack` while pinging, after the same measurement over an idle wait as long as `baselineMs`,
 * and fails when the attack stalled `/ping/` by seconds beyond that baseline. Returns the attack's result.
 */
export async function expectNoStall<T>(t: TestApp, attack: () => Promise<T>, baselineMs = 1000): Promise<T> {
  const idle = await longestPingDuring(t, () => new Promise((resolve) => setTimeout(resolve, baselineMs)));
  const during = await longestPingDuring(t, attack);
  expect(during.longestMs, `longest /ping/ wait ${Math.round(during.longestMs)} ms during the attack, ${Math.round(idle.longestMs)} ms without`).toBeLessThan(
    idle.longestMs + STALL_MS,
  );
  return during.result;
}
