import { describe, expect, it } from 'vitest';
import { medianOf, medianRatio, pooled, pooledOverRuns, quantile } from '../../bench/lib/ratios.js';

/** The CPU-time benches' statistics (bench/lib/ratios.ts): what their printed ratios and intervals mean. */
describe('bench ratios', () => {
  it('quantile is the nearest rank', () => {
    expect(quantile([5, 1, 3], 0.5)).toBe(3);
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4, 5], 0)).toBe(1);
  });

  it('medianRatio compares the arms by their samples’ medians, with an interval around it that narrows with more samples', () => {
    const base = [100, 98, 102, 130, 99, 101, 97];
    const mine = base.map((v) => v * 1.1);
    const few = medianRatio(mine, base);
    expect(few.ratio).toBeCloseTo(110, 6);
    expect(few.low).toBeLessThanOrEqual(110);
    expect(few.high).toBeGreaterThanOrEqual(110);
    // Resampled on their own, the arms' medians can fall on different samples: the interval has width.
    expect(few.high - few.low).toBeGreaterThan(0);
    const many = medianRatio([...mine, ...mine, ...mine, ...mine], [...base, ...base, ...base, ...base]);
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
  });

  it('medianOf gives the median of paired ratios, its interval inside the samples and narrowing with more of them', () => {
    const ratios = [1.01, 0.99, 1.03, 1.02, 0.98, 1.2, 1.0];
    const few = medianOf(ratios);
    expect(few.value).toBe(1.01);
    expect(few.low).toBeGreaterThanOrEqual(0.98);
    expect(few.high).toBeLessThanOrEqual(1.2);
    expect(few.low).toBeLessThanOrEqual(1.01);
    expect(few.high).toBeGreaterThanOrEqual(1.01);
    const many = medianOf([...ratios, ...ratios, ...ratios, ...ratios]);
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
    expect(medianOf([1.05, 1.05, 1.05])).toEqual({ value: 1.05, low: 1.05, high: 1.05 });
  });

  it('pooled compares sums round by round', () => {
    const { ratio, low, high } = pooled([2, 4, 6], [1, 2, 3]);
    expect(ratio).toBeCloseTo(200, 6);
    // Every round's ratio is 2: every resample's too.
    expect([low, high]).toEqual([200, 200]);
  });
});

describe('pooledOverRuns', () => {
  it('pools every process of every run, its interval widened by what differs between runs', () => {
    const run = (ratio: number) => [100, 96, 104, 99, 101, 100].map((base, p) => ({ base, mine: base * ratio * (1 + (p % 2 ? 0.005 : -0.005)) }));
    const alike = pooledOverRuns([run(1.03), run(1.03), run(1.03)]);
    expect(alike.ratio).toBeCloseTo(103, 0);
    expect(alike.low).toBeLessThanOrEqual(alike.ratio);
    expect(alike.high).toBeGreaterThanOrEqual(alike.ratio);
    // The same mean from runs that disagree: the interval is wider, and reaches toward the runs' own figures.
    const apart = pooledOverRuns([run(1.0), run(1.03), run(1.06)]);
    expect(apart.ratio).toBeCloseTo(103, 0);
    expect(apart.high - apart.low).toBeGreaterThan(3 * (alike.high - alike.low));
    expect(apart.high).toBeLessThanOrEqual(106.5);
    expect(apart.low).toBeGreaterThanOrEqual(99.5);
  });

  it('weighs processes by their CPU, as the single run’s pooled figure does', () => {
    const { ratio, low, high } = pooledOverRuns([[{ mine: 2, base: 1 }], [{ mine: 30, base: 10 }]]);
    expect(ratio).toBeCloseTo((32 / 11) * 100, 6);
    expect(low).toBeCloseTo(200, 6);
    expect(high).toBeCloseTo(300, 6);
  });
});
