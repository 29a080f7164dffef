/**
 * Statistics of the CPU-time benches that compare arms round by round (`security-write.bench.ts`,
 * `security-write.processes.ts`), and the runs of the paired one pooled (`security-write.verdict.ts`): quantiles,
 * means and pooled ratios with their bootstrap intervals.
 */
import { seededRandom } from '../../src/shared/seeded-random.js';

const BOOTSTRAP = 2000;

/** Nearest-rank quantile. */
export const quantile = (values: readonly number[], q: number): number => [...values].sort((a, b) => a - b)[Math.round(q * (values.length - 1))]!;
export const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** sum(mine) / sum(base) over all rounds in %, with a 95% interval from resampling rounds (a round's two values stay together). */
export function pooled(mine: readonly number[], base: readonly number[]): { ratio: number; low: number; high: number } {
  const next = seededRandom(33); // the same intervals for the same samples
  const ratios: number[] = [];
  for (let b = 0; b < BOOTSTRAP; b += 1) {
    let a = 0;
    let c = 0;
    for (let i = 0; i < mine.length; i += 1) {
      const r = Math.floor(next() * mine.length);
      a += mine[r]!;
      c += base[r]!;
    }
    ratios.push((a / c) * 100);
  }
  return { ratio: (mean(mine) / mean(base)) * 100, low: quantile(ratios, 0.025), high: quantile(ratios, 0.975) };
}

/**
 * median(mine) / median(base) in %, where each value is one independent sample (a process's figure), with a
 * 95% interval from resampling each arm's samples on its own.
 */
export function medianRatio(mine: readonly number[], base: readonly number[]): { ratio: number; low: number; high: number } {
  const next = seededRandom(34);
  const resample = (values: readonly number[]) => Array.from(values, () => values[Math.floor(next() * values.length)]!);
  const ratios: number[] = [];
  for (let b = 0; b < BOOTSTRAP; b += 1) ratios.push((quantile(resample(mine), 0.5) / quantile(resample(base), 0.5)) * 100);
  return { ratio: (quantile(mine, 0.5) / quantile(base, 0.5)) * 100, low: quantile(ratios, 0.025), high: quantile(ratios, 0.975) };
}

/** The median of `values` (independent samples, e.g. per-process ratios) with a 95% interval from resampling them. */
export function medianOf(values: readonly number[]): { value: number; low: number; high: number } {
  const next = seededRandom(35);
  const medians: number[] = [];
  for (let b = 0; b < BOOTSTRAP; b += 1) medians.push(quantile(Array.from(values, () => values[Math.floor(next() * values.length)]!), 0.5));
  return { value: quantile(values, 0.5), low: quantile(medians, 0.025), high: quantile(medians, 0.975) };
}

/**
 * The pooled ratio of several runs of a paired bench, in %: `runs[r][p]` is run r's process p as
 * `{ mine, base }`, each that process's mean CPU per request over its rounds in one arm. The ratio is
 * sum(mine) / sum(base) over every process of every run; its 95% interval resamples the runs and then,
 * within each run drawn, its processes, so that what differs from run to run (the host's state, a run's
 * processes) widens the interval as much as what differs between processes.
 */
export function pooledOverRuns(runs: ReadonlyArray<ReadonlyArray<{ mine: number; base: number }>>): { ratio: number; low: number; high: number } {
  const next = seededRandom(36);
  const sums = (pairs: ReadonlyArray<{ mine: number; base: number }>) => pairs.reduce((s, p) => ({ mine: s.mine + p.mine, base: s.base + p.base }), { mine: 0, base: 0 });
  const all = sums(runs.flat());
  const ratios: number[] = [];
  for (let b = 0; b < BOOTSTRAP; b += 1) {
    let mine = 0;
    let base = 0;
    for (let r = 0; r < runs.length; r += 1) {
      const run = runs[Math.floor(next() * runs.length)]!;
      for (let p = 0; p < run.length; p += 1) {
        const pair = run[Math.floor(next() * run.length)]!;
        mine += pair.mine;
        base += pair.base;
      }
    }
    ratios.push((mine / base) * 100);
  }
  return { ratio: (all.mine / all.base) * 100, low: quantile(ratios, 0.025), high: quantile(ratios, 0.975) };
}
