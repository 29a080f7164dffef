/**
 * A small benchmark harness: autocannon runs in a child process (its CLI, JSON output) so the load
 * generator does not share the event loop of the servers under test, which listen in this process.
 * `compare` interleaves the targets round by round, so drift on a shared machine hits all alike,
 * and reports medians; ratios are taken within each round against the baseline target.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const run = promisify(execFile);

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** Default GET; with `body`, the request's JSON body. */
  method?: string;
  body?: string;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** This process's CPU time (user + system) per request, in µs: the servers' cost, without the load generator's. */
  cpuPerRequest: number;
  /** Non-2xx responses plus connection errors; a benchmark of failures measures nothing. */
  failed: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
}

export async function load(target: Target, { seconds, connections }: LoadOptions): Promise<LoadResult> {
  const headerArgs = Object.entries(target.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  if (target.method) headerArgs.push('-m', target.method);
  if (target.body !== undefined) headerArgs.push('-H', 'content-type=application/json', '-b', target.body);
  const cpuBefore = process.cpuUsage();
  const { stdout } = await run(
    process.execPath,
    [autocannonBin, '-j', '-c', String(connections), '-d', String(seconds), ...headerArgs, target.url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const cpu = process.cpuUsage(cpuBefore);
  const out = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return {
    rps: out.requests.average,
    p50: out.latency.p50,
    p99: out.latency.p99,
    failed: out.non2xx + out.errors,
    cpuPerRequest: (cpu.user + cpu.system) / Math.max(1, out.requests.total),
  };
}

export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export interface CompareOptions extends LoadOptions {
  rounds: number;
  warmupSeconds: number;
}

export interface Comparison {
  target: Target;
  rounds: LoadResult[];
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  /** Median over rounds of this target's req/s divided by the baseline's in the same round. */
  rpsRatio: number;
  /** Median server CPU µs per request, and the baseline's divided by it (1 = as cheap as the baseline). */
  cpuPerRequest: number;
  cpuRatio: number;
}

/** Warms every target up, then measures them round-robin; `targets[0]` is the baseline. */
export async function compare(targets: readonly Target[], options: CompareOptions): Promise<Comparison[]> {
  for (const target of targets) await load(target, { ...options, seconds: options.warmupSeconds });
  const rounds = targets.map(() => [] as LoadResult[]);
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, target] of targets.entries()) rounds[i]!.push(await load(target, options));
  }
  const baseline = rounds[0]!;
  return targets.map((target, i) => {
    const rs = rounds[i]!;
    return {
      target,
      rounds: rs,
      rps: median(rs.map((r) => r.rps)),
      p50: median(rs.map((r) => r.p50)),
      p99: median(rs.map((r) => r.p99)),
      failed: rs.reduce((n, r) => n + r.failed, 0),
      rpsRatio: median(rs.map((r, round) => r.rps / baseline[round]!.rps)),
      cpuPerRequest: median(rs.map((r) => r.cpuPerRequest)),
      cpuRatio: median(rs.map((r, round) => baseline[round]!.cpuPerRequest / r.cpuPerRequest)),
    };
  });
}

export function printComparison(title: string, results: readonly Comparison[]): void {
  const baseline = results[0]!;
  console.log(title);
  console.log(`${'target'.padEnd(44)}  req/s  vs ${baseline.target.name}  p50 ms  p99 ms  p99 vs  CPU µs/req  CPU vs  failed  rounds (req/s)`);
  for (const r of results) {
    console.log(
      [
        r.target.name.padEnd(44),
        r.rps.toFixed(0).padStart(5),
        `${(r.rpsRatio * 100).toFixed(0)}%`.padStart(5 + baseline.target.name.length),
        r.p50.toFixed(1).padStart(6),
        r.p99.toFixed(1).padStart(6),
        r.p99 === baseline.p99 ? '1.00x'.padStart(6) : baseline.p99 > 0 ? `${(r.p99 / baseline.p99).toFixed(2)}x`.padStart(6) : `+${r.p99.toFixed(0)}ms`.padStart(6),
        r.cpuPerRequest.toFixed(1).padStart(10),
        `${(r.cpuRatio * 100).toFixed(0)}%`.padStart(6),
        String(r.failed).padStart(6),
        ' ' + r.rounds.map((x) => x.rps.toFixed(0)).join(' '),
      ].join('  '),
    );
  }
}
