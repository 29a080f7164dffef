/**
 * Issue 33's "under 5%" in CPU time, each arm in a process of its own (`security-write.bench.ts` runs the
 * arms' two app instances in one process). A served process has one app; in one process the two instances
 * share their code (Fastify's hook runners, the gateway's handlers) and so its type feedback, which mixes
 * both apps' hooks and objects at every shared call site. The instruction counts
 * (`security-write.instructions.ts`, one arm a process) read the scoped read within 1% of `off` where this
 * one-process bench read +9–16%; this bench times the calls the same way in separate processes.
 *
 * Arms (`bench/lib/security-calls.ts`): `off` twice (A and B: the same configuration, B/A is the control,
 * the method's own spread) and `scoped` (the served app, a token scoped in every dimension); `unscoped` with
 * `BENCH_ARMS=off,off,scoped,unscoped`. Each arm's child warms up (`BENCH_WARMUP` calls of each, 1000), then
 * the parent runs `BENCH_ROUNDS` (40) rounds: in a round, per case (read, insert), each arm in turn, in an
 * order rotating every round, does a block of `BENCH_BLOCK` (100) calls after a full collection and
 * `BENCH_WARM` (3) untimed calls. One child works at a time, so they see the same machine in turn. Timed:
 * each call's CPU (`process.cpuUsage` of the child; the answer is not parsed). Printed per case and arm:
 * the median over rounds of the block's median and mean CPU per call, and the median over rounds of the
 * ratio to off A within the round, with quartiles, all rounds' means pooled with a 95% bootstrap interval, and
 * the kernel's part (system CPU a call: what instruction counts under valgrind, user space only, leave out).
 * An arm named several times runs in that many processes, and is also compared across its processes
 * (`printAcrossProcesses`, with a 95% interval from resampling the processes): the processes of one arm
 * differ by more than 5% (also with V8's hash and random seeds fixed: six `off` processes spread 1.24× with
 * `--hash-seed=42 --random-seed=42`, 1.22× without).
 *
 *   npx tsx bench/security-write.processes.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/security-write.processes.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { ask as askChild } from './lib/child-messages.js';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { mean, medianRatio, pooled, quantile } from './lib/ratios.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const BLOCK = Number(process.env.BENCH_BLOCK ?? 100);
const WARM = Number(process.env.BENCH_WARM ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const ARMS = (process.env.BENCH_ARMS ?? 'off,off,scoped').split(',');
/**
 * BENCH_NODE_FLAGS: more flags for every child, e.g. `--no-memory-reducer`: with many processes taking turns,
 * each is idle for seconds between its blocks, and V8's memory reducer gives its heap back meanwhile (a read's
 * system CPU went from 4–8 µs with 3 processes to 200–300 µs with 40).
 */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
const CASES = ['read', 'insert'] as const;
type CaseName = (typeof CASES)[number];

/** Parent → child: run a block of a case; child → parent: the block's CPU per timed call, in µs. */
type Command = { case: CaseName } | { warmup: number } | { close: true };
type Answer = { ready: true } | { cpu: number[]; system: number[] } | { warm: true } | { error: string };
const ask = (worker: ChildProcess, command: Command | undefined) => askChild<Answer>(worker, command);

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

async function child(arm: string): Promise<void> {
  const { openSecurityArm } = await import('./lib/security-calls.js');
  const calls = await openSecurityArm(arm);
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('the child needs --expose-gc');
  const send = (answer: Answer) => process.send!(answer);
  process.on('message', (command: Command) => {
    void (async () => {
      try {
        if ('close' in command) {
          await calls.close();
          process.disconnect();
          return;
        }
        if ('warmup' in command) {
          for (let i = 0; i < command.warmup; i += 1) await calls.insert();
          for (let i = 0; i < command.warmup; i += 1) await calls.read(true);
          send({ warm: true });
          return;
        }
        const call = command.case === 'read' ? () => calls.read() : () => calls.insert();
        collect();
        for (let i = 0; i < WARM; i += 1) await call();
        const cpu: number[] = [];
        const system: number[] = [];
        for (let i = 0; i < BLOCK; i += 1) {
          const before = process.cpuUsage();
          await call();
          const used = process.cpuUsage(before);
          cpu.push(used.user + used.system);
          system.push(used.system);
        }
        send({ cpu, system });
      } catch (error) {
        send({ error: String(error) });
      }
    })();
  });
  send({ ready: true });
}

async function parent(): Promise<void> {
  const loadAtStart = load();
  const script = fileURLToPath(import.meta.url);
  const workers = ARMS.map((arm) => fork(script, ['child', arm], { execArgv: ['--expose-gc', ...NODE_FLAGS, '--import', 'tsx'], env: process.env }));
  try {
    await Promise.all(workers.map((w) => ask(w, undefined)));
    // Warm-ups one after the other: each arm's JIT sees its calls alone, as a served process would.
    for (const w of workers) await ask(w, { warmup: WARMUP });
    /** blocks[case][arm][round]: the CPU per call of that block, µs. */
    const blocks = Object.fromEntries(CASES.map((c) => [c, ARMS.map(() => [] as number[][])])) as Record<CaseName, number[][][]>;
    /** The kernel's part: system CPU per call, summed over all rounds, per case and arm. */
    const system = Object.fromEntries(CASES.map((c) => [c, ARMS.map(() => 0)])) as Record<CaseName, number[]>;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of CASES) {
        const order = ARMS.map((_, i) => (i + round) % ARMS.length);
        for (const arm of order) {
          const answer = await ask(workers[arm]!, { case: name });
          if (!('cpu' in answer)) throw new Error('unexpected answer');
          blocks[name][arm]!.push(answer.cpu);
          system[name][arm] = system[name][arm]! + answer.system.reduce((a, b) => a + b, 0);
        }
      }
    }
    print(blocks, system, loadAtStart);
  } finally {
    for (const w of workers) if (w.connected) w.send({ close: true });
  }
}

function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** The pooled ratio of the rounds' means to off A's, with its 95% interval. */
function pooledText(mine: readonly number[], base: readonly number[]): string {
  const { ratio, low, high } = pooled(mine, base);
  return `${ratio.toFixed(1)}% (95% ${low.toFixed(1)}–${high.toFixed(1)}%)`;
}

function print(blocks: Record<CaseName, number[][][]>, system: Record<CaseName, number[]>, loadAtStart: string): void {
  const dialect = process.env.BENCH_DATABASE_URL ? "postgres (the server's CPU not counted)" : 'sqlite';
  console.log(`${dialect}, one process per arm (${ARMS.join(', ')})${NODE_FLAGS.length > 0 ? `, node ${NODE_FLAGS.join(' ')}` : ''}, ${ROUNDS} rounds of blocks of ${BLOCK} timed calls after ${WARM} untimed, ${WARMUP} warm-up calls of each; Node ${process.version}; load ${loadAtStart} at start, ${load()} at end`);
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  for (const name of CASES) {
    console.log(name === 'read' ? '100-row read' : 'single-row insert');
    const medians = blocks[name].map((rounds) => rounds.map(median));
    const means = blocks[name].map((rounds) => rounds.map(mean));
    ARMS.forEach((arm, i) => {
      const label = ARMS.filter((a) => a === arm).length > 1 ? `${arm} ${String.fromCharCode(65 + ARMS.slice(0, i).filter((a) => a === arm).length)}` : arm;
      const ratios = medians[i]!.map((m, r) => m / medians[0]![r]!);
      console.log(
        `  ${label.padEnd(12)} CPU per call: median ${median(medians[i]!).toFixed(0)} µs, mean ${median(means[i]!).toFixed(0)} µs | ÷ off A within a round (medians): median ${pct(median(ratios))} [${pct(quantile(ratios, 0.25))}–${pct(quantile(ratios, 0.75))}] | means pooled ${pooledText(means[i]!, means[0]!)} | system CPU ${(system[name][i]! / (ROUNDS * BLOCK)).toFixed(1)} µs a call`,
      );
    });
    printAcrossProcesses(medians, means);
  }
}

/**
 * Arms named more than once (`BENCH_ARMS=off,scoped,off,scoped,…`): each process's own figure (the median
 * over rounds of its block medians; the mean of its block means) taken as one sample, and the arms compared by
 * the median of their processes' figures. A process's figure differs from another's of the same arm by more
 * than the scope costs (three `off` processes: 96.5%, 100% and 136.7% by medians), as V8 settles each
 * process's code differently: only several processes per arm average that out.
 */
function printAcrossProcesses(medians: number[][], means: number[][]): void {
  const names = [...new Set(ARMS)].filter((arm) => ARMS.filter((a) => a === arm).length > 1);
  if (names.length === 0) return;
  const figures = (arm: string, of: number[][], stat: (values: number[]) => number) => ARMS.flatMap((a, i) => (a === arm ? [stat(of[i]!)] : []));
  const base = ARMS[0]!;
  const baseMedian = median(figures(base, medians, median));
  const baseMean = median(figures(base, means, mean));
  for (const arm of names) {
    const byMedian = figures(arm, medians, median);
    const byMean = figures(arm, means, mean);
    const list = (values: number[]) => [...values].sort((a, b) => a - b).map((v) => v.toFixed(0)).join(' ');
    const interval = ({ low, high }: { low: number; high: number }) => `(95% ${low.toFixed(1)}–${high.toFixed(1)}%)`;
    console.log(
      `  ${arm} over ${byMedian.length} processes: medians ${list(byMedian)} µs → ${((median(byMedian) / baseMedian) * 100).toFixed(1)}% of ${base}'s ${arm === base ? '' : interval(medianRatio(byMedian, figures(base, medians, median)))}; means ${list(byMean)} µs → ${((median(byMean) / baseMean) * 100).toFixed(1)}% ${arm === base ? '' : interval(medianRatio(byMean, figures(base, means, mean)))}`,
    );
  }
}
