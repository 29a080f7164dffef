/**
 * Instruction counts instead of time, for overheads of a few percent that a loaded machine's timings
 * cannot resolve (issues 28 and 33). Each arm of a bench runs in a child process of its own under
 * `valgrind --tool=callgrind`, which counts the instructions the process executes (every thread of it)
 * whatever the machine's load.
 *
 * The child (`countSegments`) sets up and warms up with instrumentation off (`--instr-atstart=no`:
 * start-up under callgrind is most of a run's time), switches it on (`callgrind_control -i on`), then
 * runs each case's segments of N calls, reading `process.ppid` before and after each:
 * `--dump-before=uv_os_getppid` writes the counts since the last dump there. Before each counted segment
 * a full collection (`gc()`, `--expose-gc`) runs in a dumped segment of its own, not counted: a major
 * collection landing in a counted segment made it 2–5 times the others. Young-generation collections stay
 * in the counted calls, in proportion to what a call allocates.
 *
 * V8 runs with `--single-threaded --no-memory-reducer` unless `BENCH_NODE_FLAGS` says otherwise: no
 * background compiler or collector threads, so their work runs on the main thread's stack in the segment
 * that asked for it, where the views below can tell it apart; and no memory reducer, a collector started by
 * a wall-clock timer when allocation looks slow, which under valgrind (50 times slower) it always does: it
 * landed in one segment of a run and not in others (a read segment at 872k instructions a call against
 * 547k, its marking and sweeping outside `Heap::CollectGarbage`).
 *
 * The parent (`countArms`, `printViews`) reads the dumps and prints, per case and arm, the median
 * segment's and the mean segment's count per call, as % of the first arm, and every run's median: the
 * spread of the same arm's runs (A/A) is the method's own. Views (`callgrind_annotate`, inclusive):
 *   - all instructions;
 *   - **without V8's optimizing compiler** (`Runtime_CompileOptimized`). Even after thousands of warm-up
 *     calls, TurboFan still compiles a function now and then (51 compiles in the 1,000 updates after 2,000,
 *     11 after 4,000: `--trace-opt`), and a compile is tens to hundreds of millions of instructions: it was
 *     52–76% of single-row update segments that differed by 2×, and the same segments without it differed
 *     by 4%. A compile is paid once per function, not per call;
 *   - the calls' own code (without the compiler and the collector, `Heap::CollectGarbage`): the tightest;
 *   - the collector alone: it runs when allocation has filled the young generation, so it lands in some
 *     segments and not others (`security-write.allocations.ts` counts the bytes that drive it instead);
 *   - with `BENCH_VALGRIND_FLAGS=--cache-sim=yes` (twice as slow), the cycles callgrind estimates from its
 *     cache simulation (an instruction 1, a first-level miss 10, a last-level miss 100), without the compiler
 *     and for the calls' own code.
 * `BENCH_KEEP=dir` keeps the files; `BENCH_FROM=dir` reads kept files again instead of running.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readSegment, type Segment } from './callgrind-annotate.js';

/** Node's flags in the child (V8's background threads off: see the module's comment). */
export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--single-threaded --no-memory-reducer').split(' ').filter(Boolean);
/** More of valgrind's options (e.g. `--cache-sim=yes`: cache misses beside the instructions, for a cycle estimate). */
const VALGRIND_FLAGS = (process.env.BENCH_VALGRIND_FLAGS ?? '').split(' ').filter(Boolean);

export interface CountedCase {
  /** One call (awaited N times a segment). */
  call: () => Promise<void>;
  /** Work counted once at the end of each segment (e.g. a batch step the app runs on a timer). */
  afterSegment?: () => Promise<void>;
}

/** Child side: switches instrumentation on, then each case's `segments` segments of `n` calls, each ended by a dump. */
export async function countSegments(cases: readonly CountedCase[], { segments, n }: { segments: number; n: number }): Promise<void> {
  // This process keeps running JavaScript until callgrind_control has switched instrumentation on
  // (valgrind answers it between blocks of code, not in a wait).
  let on = false;
  execFile('callgrind_control', ['-i', 'on', String(process.pid)], (error) => {
    if (error) throw error;
    on = true;
  });
  while (!on) await new Promise((resolve) => setImmediate(resolve));
  const dump = () => process.ppid; // callgrind dumps before uv_os_getppid
  dump();
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('the child needs --expose-gc');
  for (const { call, afterSegment } of cases) {
    for (let segment = 0; segment < segments; segment += 1) {
      collect();
      dump();
      for (let i = 0; i < n; i += 1) await call();
      await afterSegment?.();
      dump();
    }
  }
}

/**
 * Parent side: every arm of `script` (`script child <arm>`) `repeat` times, the arms of a run in parallel
 * (instruction counts do not depend on the machine's load). Returns, per arm, per run, the counted segments.
 * The callgrind files go to a temporary folder, or to `BENCH_KEEP` (kept, for callgrind_annotate:
 * `<arm>.<run>.out.<k>`, .1 the switch-on, then a collection and a counted segment in turn).
 */
export async function countArms(script: string, arms: readonly string[], { repeat, countedSegments }: { repeat: number; countedSegments: number }): Promise<Map<string, Segment[][]>> {
  // BENCH_FROM: the files a run kept (BENCH_KEEP), read again instead of running (e.g. to add a view).
  const from = process.env.BENCH_FROM;
  const dir = from ?? process.env.BENCH_KEEP ?? mkdtempSync(path.join(tmpdir(), 'basegate-callgrind-'));
  mkdirSync(dir, { recursive: true });
  const counts = new Map<string, Segment[][]>();
  for (let run = 1; run <= repeat; run += 1) {
    const done = await Promise.all(
      arms.map(async (arm) => {
        const started = Date.now();
        const out = path.join(dir, `${arm}.${run}.out`);
        if (!from) await callgrindArm(script, arm, out);
        const files = countedFiles(out, countedSegments);
        const segments: Segment[] = [];
        for (const file of files) segments.push(await annotate(file));
        const millions = (c: number) => `${(c / 1e6).toFixed(0)}M`;
        console.error(`${arm} run ${run}: ${((Date.now() - started) / 1000).toFixed(0)} s; optimizing compiler in the counted segments ${segments.map((g) => millions(g.compiler.Ir ?? 0)).join(' ')}`);
        return segments;
      }),
    );
    arms.forEach((arm, i) => counts.set(arm, [...(counts.get(arm) ?? []), done[i]!]));
  }
  if (!process.env.BENCH_KEEP && !from) rmSync(dir, { recursive: true, force: true });
  return counts;
}

/** A dump's events in all, and inclusive in V8's optimizing compiler (`Runtime_CompileOptimized`) and its collector (`Heap::CollectGarbage`). */
async function annotate(file: string): Promise<Segment> {
  const { stdout } = await promisify(execFile)('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { maxBuffer: 256 * 1024 * 1024 });
  return readSegment(stdout);
}

/** Runs `script child <arm>` under callgrind; the dumps go to `<out>.<k>`. */
async function callgrindArm(script: string, arm: string, out: string): Promise<void> {
  await promisify(execFile)(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', '--dump-before=uv_os_getppid', `--callgrind-out-file=${out}`, ...VALGRIND_FLAGS, process.execPath, '--expose-gc', ...NODE_FLAGS, '--import', 'tsx', script, 'child', arm],
    { env: process.env, maxBuffer: 64 * 1024 * 1024 },
  );
}

/**
 * The files of an arm's counted segments, in order (each case's in turn). The dumps are `<out>.1` …
 * `<out>.k`: the one that switched instrumentation on, then a collection's and a counted segment's, in
 * turn (none before: uninstrumented code does not trigger a dump); `<out>` is the teardown.
 */
function countedFiles(out: string, countedSegments: number): string[] {
  const dir = path.dirname(out);
  const prefix = `${path.basename(out)}.`;
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .map((f) => Number(f.slice(prefix.length)))
    .sort((a, b) => a - b)
    .map((k) => path.join(dir, `${prefix}${k}`));
  if (files.length !== 2 * countedSegments + 1) throw new Error(`${out}: ${files.length} dumps, expected ${2 * countedSegments + 1}`);
  return files.filter((_, i) => i > 0 && i % 2 === 0);
}

/**
 * Cycles estimated from the cache simulation (`BENCH_VALGRIND_FLAGS=--cache-sim=yes`), callgrind's own
 * formula: an instruction 1, a first-level miss 10, a last-level miss 100. Undefined without the simulation.
 */
function cycles(e: Record<string, number>): number | undefined {
  if (e.D1mr === undefined) return undefined;
  return e.Ir! + 10 * (e.I1mr! + e.D1mr + e.D1mw!) + 100 * (e.ILmr! + e.DLmr! + e.DLmw!);
}

/** The views `printViews` prints: each a number per segment. */
const VIEWS: Array<[string, (g: Segment) => number | undefined]> = [
  ['all instructions', (g) => g.total.Ir],
  ["without V8's optimizing compiler (paid once per function, not per call)", (g) => g.total.Ir! - g.compiler.Ir!],
  ["the calls' own code (neither the compiler nor the collector)", (g) => g.total.Ir! - g.compiler.Ir! - g.collector.Ir!],
  ['the collector alone (it runs when allocation fills the young generation: lands unevenly)', (g) => g.collector.Ir],
  ['estimated cycles without the compiler (cache misses counted: --cache-sim=yes)', (g) => subtract(cycles(g.total), cycles(g.compiler))],
  ["estimated cycles of the calls' own code", (g) => subtract(subtract(cycles(g.total), cycles(g.compiler)), cycles(g.collector))],
];

function subtract(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a - b;
}

/** Prints every view of `counts` (those the files allow) with `printCounts`. */
export function printViews(counts: ReadonlyMap<string, Segment[][]>, caseNames: readonly string[], options: { segments: number; n: number }): void {
  for (const [title, view] of VIEWS) {
    const values = new Map([...counts].map(([arm, runs]) => [arm, runs.map((run) => run.map(view))]));
    if ([...values.values()].some((runs) => runs.some((run) => run.some((v) => v === undefined)))) continue;
    console.log(`== ${title}`);
    printCounts(values as Map<string, number[][]>, caseNames, options);
  }
}

/**
 * Prints, per case, each arm's count per call: the median segment's / N and the mean of all
 * segments, both as % of the first arm's, and each run's median with its segments' range.
 * `counts`: per arm (the first is the baseline), per run, the counted segments (each case's `segments` in turn).
 */
function printCounts(counts: ReadonlyMap<string, number[][]>, caseNames: readonly string[], { segments, n }: { segments: number; n: number }): void {
  console.log("per call: the median segment's count / N, and the mean of all segments; % of the first arm; per run: median (% of the first arm) [min–max of its segments]");
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const k = (v: number) => `${(v / 1e3).toFixed(0)}k`;
  const arms = [...counts.keys()];
  caseNames.forEach((name, c) => {
    console.log(name);
    const ofRun = (all: number[]) => all.slice(c * segments, (c + 1) * segments).map((i) => i / n);
    const base = counts.get(arms[0]!)!.map(ofRun);
    const baseMedian = mean(base.map(median));
    const baseMean = mean(base.map(mean));
    for (const arm of arms) {
      const runs = counts.get(arm)!.map(ofRun);
      const medians = runs.map(median);
      const means = runs.map(mean);
      const detail = runs.map((r, i) => `${k(medians[i]!)} (${((medians[i]! / baseMedian) * 100).toFixed(1)}%) [${k(Math.min(...r))}–${k(Math.max(...r))}]`).join('; ');
      console.log(
        `  ${arm.padEnd(9)} median ${k(mean(medians))} per call, ${((mean(medians) / baseMedian) * 100).toFixed(1)}% | mean ${k(mean(means))}, ${((mean(means) / baseMean) * 100).toFixed(1)}% | runs: ${detail}`,
      );
    }
  });
}
