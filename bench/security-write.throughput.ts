/**
 * Issue 33's "under 5%" as a served process pays it: each arm's app listening on HTTP in a process of its
 * own, several processes per arm, each driven in turn at full speed for a window, and the server's own CPU
 * per answered request taken from the middle of the window. The other CPU benches time calls one by one in
 * processes that sit idle between their blocks (`security-write.processes.ts`: a call's CPU grew 4–6× with
 * many processes, mostly system CPU, each process's memory cold when its turn came); here a process is
 * measured only once it has served under load for `BENCH_SETTLE_MS`.
 *
 * Arms (`bench/lib/security-calls.ts`): `off` (scopes and audit off, an unscoped token) and `scoped` (the
 * served app, a token scoped in every dimension); `BENCH_PROCESSES` (4) processes of each. A round runs
 * every process once per case (read: the 100-row read; insert: the single-row insert), one process of each arm
 * after the other (started in that order too), the sets and the arms within a set in an order rotating every round (after `BENCH_WARMUP_ROUNDS` (1) untimed rounds); a window is `BENCH_CONNECTIONS` (4) closed-loop HTTP clients in this process for
 * `BENCH_SETTLE_MS` (500) and then `BENCH_WINDOW_MS` (2000) measured: the child's `process.cpuUsage()`
 * and the requests answered, read at both ends of the measured part. Printed per case: each process's
 * figure (the median over rounds of its CPU per request, µs), the arms compared by the median of their
 * processes' figures with a 95% interval from resampling processes, and the same ratio taken within each
 * round (the median over processes of that round, so a round's machine load is shared by both arms), with
 * the rounds pooled and a 95% interval from resampling rounds.
 *
 * `BENCH_PAIRED=1`: every process serves every arm (the `off` app beside the served one, on one container), and
 * the arms are compared within each process, in slices: during a window the arms take turns every
 * `BENCH_SLICE_MS` (100), in an order in which every arm follows every other arm alike (`lib/turn-order.ts`; a
 * rotation by one per turn let the control follow its own app more often than the other arms did), and each
 * arm's CPU and requests are summed over its slices. On this machine kind the CPU time of a fixed piece of work
 * drifts by up to 1.6× over seconds (the host, not the process: a loop of `JSON.stringify` shows it); whole
 * windows of one arm after the other took that drift as a difference between arms (an A/A of 84–124% per
 * process), slices of 100 ms cancel it (the same loop's A/A: 100.7%, quartiles 97.8–101.5%). A process's arms
 * share its compiled code, so the 3–30% by which processes differ falls on both. Printed: each process's ratio
 * (the median over rounds of its per-round ratio), their median with a 95% interval from resampling processes,
 * and every window pooled (95% interval from resampling processes). `off-b` names `off` again: the control.
 *
 *   npx tsx bench/security-write.throughput.ts
 *   BENCH_PAIRED=1 BENCH_ARMS=off,off-b,scoped BENCH_ROUNDS=8 BENCH_PROCESSES=6 npx tsx bench/security-write.throughput.ts
 *   BENCH_ROUNDS=12 BENCH_PROCESSES=6 npx tsx bench/security-write.throughput.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { ask as askChild } from './lib/child-messages.js';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { mean, medianOf, medianRatio, pooled, quantile } from './lib/ratios.js';
import { turnOrder } from './lib/turn-order.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
/** Untimed rounds first: every process's code is optimized for both calls before any window counts. */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 500);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 2000);
const ARM_NAMES = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');
/** BENCH_PAIRED=1: each process serves all arms, compared within the process. */
const PAIRED = process.env.BENCH_PAIRED === '1';
/** Paired: the arms take turns within a window every SLICE_MS. */
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 100);
type CaseName = 'read' | 'insert';
/** BENCH_CASES: `read`, `insert` or both (the default). */
const CASES = (process.env.BENCH_CASES ?? 'read,insert').split(',') as CaseName[];

type Ready = { arm: string; origin: string; token: string; url: string; query: string; body: string };
type Command = { cpu: true } | { close: true };
/** The process's CPU time, every thread (µs). */
type Cpu = { cpu: number };
type Answer = { ready: Ready[] } | Cpu | { error: string };
const ask = (worker: ChildProcess, command: Command | undefined) => askChild<Answer>(worker, command);

const median = (values: readonly number[]) => quantile(values, 0.5);
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

/** `arms`: comma-separated, one arm or (paired) all of them. */
async function child(arms: string): Promise<void> {
  const { openSecurityTargets, INSERT_BODY, READ_QUERY } = await import('./lib/security-calls.js');
  const { targets, url, close } = await openSecurityTargets(arms.split(','));
  const ready: Ready[] = [];
  for (const { arm, app, token } of targets) {
    // The served app listens already (startBasegate); the `off` app is built beside it.
    const origin = app.server.listening ? `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` : await app.listen({ port: 0, host: '127.0.0.1' });
    ready.push({ arm, origin, token, url, query: READ_QUERY, body: JSON.stringify(INSERT_BODY) });
  }
  const send = (answer: Answer) => process.send!(answer);
  process.on('message', (command: Command) => {
    if ('close' in command) {
      void close().finally(() => process.disconnect());
      return;
    }
    const used = process.cpuUsage();
    send({ cpu: used.user + used.system });
  });
  send({ ready });
}

async function childCpu(worker: ChildProcess): Promise<Cpu> {
  const answer = await ask(worker, { cpu: true });
  if (!('cpu' in answer)) throw new Error('unexpected answer');
  return answer;
}

interface Server {
  arm: string;
  /** The process's number: paired, every arm of one process has the same. */
  process: number;
  worker: ChildProcess;
  ready: Ready;
  pool: Pool;
}

/** A window's outcome for one arm: CPU per request (µs) over the measured part, and requests answered per second. */
type Figure = { cpuPerRequest: number; perSecond: number };

/** CONNECTIONS closed-loop clients sending the case's request to `server` until `stop()`, which resolves when all have ended. */
function drive(server: Server, name: CaseName): { answered: () => number; stop: () => Promise<void> } {
  const { ready, pool } = server;
  const headers = { authorization: `Token ${ready.token}`, 'content-type': 'application/json' };
  let answered = 0;
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      const res =
        name === 'read'
          ? await pool.request({ method: 'GET', path: `${ready.url}${ready.query}`, headers })
          : await pool.request({ method: 'POST', path: ready.url, headers, body: ready.body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode}`);
      answered += 1;
    }
  };
  const clients = Array.from({ length: CONNECTIONS }, client);
  return {
    answered: () => answered,
    stop: async () => {
      stopped = true;
      // Every client ended before an error is thrown: none may send on a pool closed after it.
      const failed = (await Promise.allSettled(clients)).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Drive `server` alone: settle, then its CPU per request over the measured part. */
async function window(server: Server, name: CaseName): Promise<Figure> {
  const clients = drive(server, name);
  await sleep(SETTLE_MS);
  const [cpu0, n0, t0] = [await childCpu(server.worker), clients.answered(), performance.now()];
  await sleep(WINDOW_MS);
  const [cpu1, n1, t1] = [await childCpu(server.worker), clients.answered(), performance.now()];
  await clients.stop();
  return { cpuPerRequest: (cpu1.cpu - cpu0.cpu) / (n1 - n0), perSecond: ((n1 - n0) * 1000) / (t1 - t0) };
}

/**
 * Drive the arms of one process (`group`) in turns of SLICE_MS, in the order of `turnOrder` (every arm
 * follows every other arm alike) starting `shift` turns into it, for SETTLE_MS unmeasured and WINDOW_MS
 * measured (rounded to whole cycles of the order): per arm, its CPU per request summed over its measured
 * turns. A turn ends when its requests are answered, so the CPU read after it is that arm's alone.
 */
async function slicedWindow(group: Server[], name: CaseName, shift: number): Promise<Figure[]> {
  const worker = group[0]!.worker;
  const totals = group.map(() => ({ cpu: 0, requests: 0, ms: 0 }));
  const order = turnOrder(group.length);
  const settleTurns = Math.ceil(SETTLE_MS / SLICE_MS);
  const measuredTurns = Math.max(1, Math.round(WINDOW_MS / SLICE_MS / order.length)) * order.length;
  let before = await childCpu(worker);
  for (let t = 0; t < settleTurns + measuredTurns; t += 1) {
    const j = order[(t + shift) % order.length]!;
    const started = performance.now();
    const clients = drive(group[j]!, name);
    await sleep(SLICE_MS);
    await clients.stop();
    const after = await childCpu(worker);
    if (t >= settleTurns) {
      totals[j]!.cpu += after.cpu - before.cpu;
      totals[j]!.requests += clients.answered();
      totals[j]!.ms += performance.now() - started;
    }
    before = after;
  }
  return totals.map(({ cpu, requests, ms }) => ({ cpuPerRequest: cpu / requests, perSecond: (requests * 1000) / ms }));
}

/** Paired without slices (BENCH_SLICE_MS=0): the arms of one process a whole window each, their order rotating by `shift`. */
async function serial(group: Server[], name: CaseName, shift: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (let k = 0; k < group.length; k += 1) {
    const j = (k + shift) % group.length;
    figures[j] = await window(group[j]!, name);
  }
  return figures;
}

async function parent(): Promise<void> {
  const loadAtStart = load();
  const script = fileURLToPath(import.meta.url);
  // Interleaved (off, scoped, off, scoped, …): started and measured side by side, a set of one process per arm
  // at a time, so whatever drifts along the list (start order, the machine during a round) falls on every arm alike.
  // Paired: one process per set, serving every arm.
  const childArms = PAIRED ? Array.from({ length: PROCESSES }, () => ARM_NAMES.join(',')) : Array.from({ length: PROCESSES }, () => ARM_NAMES).flat();
  const servers: Server[] = [];
  try {
    // One at a time: each child's start (migrations, seeding) has the machine to itself.
    for (const [p, arms] of childArms.entries()) {
      const worker = fork(script, ['child', arms], { execArgv: ['--import', 'tsx'], env: process.env });
      const answer = await ask(worker, undefined);
      if (!('ready' in answer)) throw new Error('unexpected answer');
      for (const ready of answer.ready) servers.push({ arm: ready.arm, process: p, worker, ready, pool: new Pool(ready.origin, { connections: CONNECTIONS }) });
    }
    const perCase = () => Object.fromEntries(CASES.map((c) => [c, servers.map(() => [] as number[])])) as Record<CaseName, number[][]>;
    /** figures[case][server][round]: CPU per request, µs. */
    const figures = perCase();
    const rates = perCase();
    const record = (round: number, name: CaseName, i: number, figure: Figure) => {
      if (round < 0) return;
      figures[name][i]!.push(figure.cpuPerRequest);
      rates[name][i]!.push(figure.perSecond);
    };
    for (let round = -WARMUP_ROUNDS; round < ROUNDS; round += 1) {
      const shift = Math.max(round, 0);
      for (const name of CASES) {
        if (PAIRED) {
          // The processes in an order rotating every round; each window serves all of a process's arms in slices.
          for (let k = 0; k < PROCESSES; k += 1) {
            const first = ((k + shift) % PROCESSES) * ARM_NAMES.length;
            const group = servers.slice(first, first + ARM_NAMES.length);
            const measured = SLICE_MS > 0 ? await slicedWindow(group, name, shift) : await serial(group, name, shift);
            measured.forEach((figure, j) => record(round, name, first + j, figure));
          }
          continue;
        }
        for (let k = 0; k < servers.length; k += 1) {
          // Sets in an order rotating every round; within a set, the arms' order rotating too.
          const set = (Math.floor(k / ARM_NAMES.length) + shift) % PROCESSES;
          const i = set * ARM_NAMES.length + ((k + shift) % ARM_NAMES.length);
          record(round, name, i, await window(servers[i]!, name));
        }
      }
    }
    print(servers, figures, rates, loadAtStart);
    // BENCH_RAW=<file>: every window's figure, per case, arm and process, for a look at their spread.
    if (process.env.BENCH_RAW) {
      const raw = CASES.map((name) => ({ case: name, servers: servers.map((s, i) => ({ arm: s.arm, process: s.process, cpuPerRequest: figures[name][i] })) }));
      writeFileSync(process.env.BENCH_RAW, JSON.stringify(raw));
    }
  } finally {
    const closed = new Set<ChildProcess>(); // paired: one close per process
    for (const s of servers) {
      await s.pool.close();
      if (s.worker.connected && !closed.has(s.worker)) s.worker.send({ close: true });
      closed.add(s.worker);
    }
  }
}

function print(servers: Server[], figures: Record<CaseName, number[][]>, rates: Record<CaseName, number[][]>, loadAtStart: string): void {
  const dialect = process.env.BENCH_DATABASE_URL ? "postgres (the database server's CPU not counted)" : 'sqlite';
  const how = PAIRED ? `, each serving every arm${SLICE_MS > 0 ? ` in turns of ${SLICE_MS} ms` : ''}` : ' per arm';
  console.log(
    `${dialect}; ${PROCESSES} processes${how} (${ARM_NAMES.join(', ')}), ${ROUNDS} rounds after ${WARMUP_ROUNDS} untimed; a window: ${CONNECTIONS} connections, ${SETTLE_MS} ms settling, ${WINDOW_MS} ms measured; Node ${process.version}; load ${loadAtStart} at start, ${load()} at end`,
  );
  const [base, ...others] = ARM_NAMES;
  const of = (arm: string) => servers.flatMap((s, i) => (s.arm === arm ? [i] : []));
  for (const name of CASES) {
    console.log(name === 'read' ? '100-row read, server CPU per request' : 'single-row insert, server CPU per request');
    const perProcess = figures[name].map(median);
    for (const arm of ARM_NAMES) {
      const list = of(arm)
        .map((i) => `${perProcess[i]!.toFixed(0)} µs (${median(rates[name][i]!).toFixed(0)}/s)`)
        .join(', ');
      console.log(`  ${arm.padEnd(8)} ${list}`);
    }
    for (const arm of others) {
      const across = medianRatio(
        of(arm).map((i) => perProcess[i]!),
        of(base!).map((i) => perProcess[i]!),
      );
      const roundFigure = (who: string) => Array.from({ length: ROUNDS }, (_, r) => median(of(who).map((i) => figures[name][i]![r]!)));
      const [mine, theirs] = [roundFigure(arm), roundFigure(base!)];
      const withinRounds = mine.map((m, r) => m / theirs[r]!);
      // The rounds resampled (these processes kept): how much the answer moves with the machine's moments.
      const byRounds = pooled(mine, theirs);
      if (PAIRED) printPaired(arm, base!, of(arm), of(base!), figures[name]);
      console.log(
        `  ${arm} ÷ ${base}: ${across.ratio.toFixed(1)}% across processes (95% ${across.low.toFixed(1)}–${across.high.toFixed(1)}%); within rounds median ${(median(withinRounds) * 100).toFixed(1)}% [${(quantile(withinRounds, 0.25) * 100).toFixed(1)}–${(quantile(withinRounds, 0.75) * 100).toFixed(1)}%], pooled ${byRounds.ratio.toFixed(1)}% (95% over rounds ${byRounds.low.toFixed(1)}–${byRounds.high.toFixed(1)}%)`,
      );
    }
  }
}

/**
 * Paired (`mine[p]` and `base[p]` are the same process p): each process's ratio is the median over rounds of
 * its per-round ratio; printed, those ratios, their median with a 95% interval from resampling processes, and
 * every window pooled (each process's mean over rounds, processes resampled).
 */
function printPaired(arm: string, base: string, mine: number[], theirs: number[], figures: number[][]): void {
  const perProcess = mine.map((m, p) => median(figures[m]!.map((f, r) => f / figures[theirs[p]!]![r]!)));
  const across = medianOf(perProcess);
  const all = pooled(
    mine.map((m) => mean(figures[m]!)),
    theirs.map((t) => mean(figures[t]!)),
  );
  const list = perProcess.map((r) => (r * 100).toFixed(1)).join(', ');
  console.log(`  ${arm} ÷ ${base}, paired within each process: ${list}%`);
  console.log(
    `  ${arm} ÷ ${base}, paired: median of processes ${(across.value * 100).toFixed(1)}% (95% ${(across.low * 100).toFixed(1)}–${(across.high * 100).toFixed(1)}%); every window pooled ${all.ratio.toFixed(1)}% (95% over processes ${all.low.toFixed(1)}–${all.high.toFixed(1)}%)`,
  );
}
