import { expect } from 'vitest';
import type { TestApp } from './app.js';

/**
 * A stall of seconds: the margin by which the longest `/ping/` wait during an attack may exceed the
 * longest wait without it, measured in the same run (wide, so a loaded machine does not make it flaky).
 */
export const STALL_MS = 3000;

/** A request of another client whose wait is measured; it asserts its own answer. */
export type Probe = () => Promise<void>;

export const pingProbe = (t: TestApp): Probe => async () => {
  const res = await t.request({ method: 'GET', url: '/ping/' });
  expect(res.statusCode).toBe(200);
};

/** The longest wait of `probe` (by default `/ping/`), asked one after another by a client of its own, while `work` runs. */
export async function longestWaitDuring<T>(probe: Probe, work: () => Promise<T>): Promise<{ longestMs: number; result: T }> {
  let done = false;
  let longestMs = 0;
  const pinger = (async () => {
    while (!done) {
      const started = performance.now();
      await probe();
      longestMs = Math.max(longestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  // A failed probe is reported when the work ends (awaited below), not as an unhandled rejection.
  pinger.catch(() => undefined);
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
 * Runs `attack` while probing (by default `/ping/`), after the same measurement over an idle wait as
 * long as `baselineMs`, and fails when the attack stalled the probe by seconds beyond that baseline.
 * Returns the attack's result.
 */
export async function expectNoStall<T>(t: TestApp, attack: () => Promise<T>, options: { probe?: Probe; baselineMs?: number } = {}): Promise<T> {
  const probe = options.probe ?? pingProbe(t);
  const idle = await longestWaitDuring(probe, () => new Promise((resolve) => setTimeout(resolve, options.baselineMs ?? 1000)));
  const during = await longestWaitDuring(probe, attack);
  expect(during.longestMs, `longest wait ${Math.round(during.longestMs)} ms during the attack, ${Math.round(idle.longestMs)} ms without`).toBeLessThan(
    idle.longestMs + STALL_MS,
  );
  return during.result;
}
