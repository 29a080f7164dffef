import { describe, expect, it } from 'vitest';
import { advance, allowance, parseMaxRate } from './pacing.js';

/** Sends as many as the bucket allows at each of `times`; returns how many went at each. */
function run(maxRate: number, times: number[], want = 1000): number[] {
  let readyAt: number | null = null;
  return times.map((now) => {
    const n = allowance({ maxRate, readyAt }, now, want);
    if (n > 0) readyAt = advance({ maxRate, readyAt }, now, n);
    return n;
  });
}

describe('webhook pacing (token bucket)', () => {
  it('a rate below one per second spaces every delivery by its interval', () => {
    expect(run(0.5, [0, 1, 1999, 2000, 3999, 4000])).toEqual([1, 0, 0, 1, 0, 1]);
  });

  it('a rate of 10/s allows a one-second burst of 10, then one per 100 ms', () => {
    expect(run(10, [0, 0, 99, 100, 150, 200])).toEqual([10, 0, 0, 1, 0, 1]);
  });

  it('an idle bucket refills to one second worth, never more', () => {
    expect(run(5, [0, 3_600_000])).toEqual([5, 5]);
  });

  it('never exceeds the rate over any window', () => {
    const times = Array.from({ length: 5000 }, (_, i) => i * 3);
    const sent = run(7, times);
    for (let start = 0; start < times.length - 334; start += 97) {
      // Any 1 s window (334 steps of 3 ms) holds at most the burst plus the rate.
      const inWindow = sent.slice(start, start + 334).reduce((a, b) => a + b, 0);
      expect(inWindow).toBeLessThanOrEqual(7 + 7);
    }
    expect(sent.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(7 + Math.ceil((15_000 * 7) / 1000));
  });

  it('parses max_rate within bounds', () => {
    expect(parseMaxRate(undefined)).toBeUndefined();
    expect(parseMaxRate(null)).toBeNull();
    expect(parseMaxRate('')).toBeNull();
    expect(parseMaxRate('2.5')).toBe(2.5);
    for (const bad of [0, 0.001, 1001, 'x', NaN, Infinity, true, {}]) expect(() => parseMaxRate(bad)).toThrow(/max_rate/);
  });
});
