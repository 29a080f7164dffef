/**
 * Issue 33's two calls (`bench/lib/security-calls.ts`: a token-authenticated 100-row read and a single-row
 * insert), counted in bytes the JavaScript heap allocates per call, per arm: what the garbage collector later
 * pays for. The instruction counts (`security-write.instructions.ts`) resolve the calls' own code to a
 * percent, but not the collector's share, which lands in some segments and not others. Allocation does not
 * depend on timing: each arm runs in a child process with a young generation large enough that no
 * collection runs inside a segment (`--min-semi-space-size`, `--max-semi-space-size`: 128 MB; a segment in which one ran is measured again),
 * and a segment's allocation is the heap's growth over its N calls after a full collection.
 *
 *   npx tsx bench/security-write.allocations.ts
 *
 * Knobs: BENCH_ARMS (off,scoped), BENCH_WARM (1000 calls of each), BENCH_SEGMENTS (11), BENCH_CALLS (N, 100).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';

const N = Number(process.env.BENCH_CALLS ?? 100);
const SEGMENTS = Number(process.env.BENCH_SEGMENTS ?? 11);
const WARM = Number(process.env.BENCH_WARM ?? 1000);
const ARMS = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

/** One arm: warm-up, then each call's segments; prints `{ read: bytes per call[], insert: … }` as JSON. */
async function child(arm: string): Promise<void> {
  const { openSecurityArm } = await import('./lib/security-calls.js');
  const { read, insert, close } = await openSecurityArm(arm);
  const collect = (globalThis as { gc?: () => void }).gc!;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  let collections = 0;
  const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  try {
    for (let i = 0; i < WARM; i += 1) await insert();
    for (let i = 0; i < WARM; i += 1) await read(true);
    const perCall: Record<string, number[]> = {};
    for (const [name, call] of [['read', () => read()], ['insert', insert]] as const) {
      perCall[name] = [];
      for (let tries = 0; perCall[name].length < SEGMENTS; tries += 1) {
        if (tries > 3 * SEGMENTS) throw new Error(`${name}: a collection ran in most segments (young generation too small?)`);
        collect();
        // The observer hears of a collection some tasks later: let it hear of the full one above first.
        await settle();
        const before = collections;
        const heap = getHeapStatistics().used_heap_size;
        for (let i = 0; i < N; i += 1) await call();
        const grown = getHeapStatistics().used_heap_size - heap;
        await settle();
        if (collections === before) perCall[name].push(grown / N);
      }
    }
    console.log(JSON.stringify(perCall));
  } finally {
    observer.disconnect();
    await close();
  }
}

async function parent(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const results = new Map<string, Record<string, number[]>>();
  for (const arm of ARMS) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=128', '--import', 'tsx', self, 'child', arm], { env: process.env, maxBuffer: 16 * 1024 * 1024 });
    results.set(arm, JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, number[]>);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`JavaScript heap allocated per call (bytes; median of ${SEGMENTS} segments of ${N} calls after ${WARM} warm-up calls of each, no collection inside a segment), Node ${process.version}`);
  for (const call of ['read', 'insert']) {
    const base = median(results.get(ARMS[0]!)![call]!);
    console.log(call);
    for (const arm of ARMS) {
      const xs = results.get(arm)![call]!;
      console.log(`  ${arm.padEnd(9)} ${median(xs).toFixed(0)} B per call, ${((median(xs) / base) * 100).toFixed(1)}% [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`);
    }
  }
}
