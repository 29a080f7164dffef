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
 *   npx tsx bench/security-write.throughput.ts
 *   BENCH_ROUNDS=12 BENCH_PROCESSES=6 npx tsx bench/security-write.throughput.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { ask as askChild } from './lib/child-messages.js';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { medianRatio, pooled, quantile } from './lib/ratios.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
/** Untimed rounds first: every process's code is optimized for both calls before any window counts. */
const WARMUP_ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 1);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 500);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 2000);
const ARM_NAMES = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');
type CaseName = 'read' | 'insert';
/** BENCH_CASES: `read`, `insert` or both (the default). */
const CASES = (process.env.BENCH_CASES ?? 'read,insert').split(',') as CaseName[];

type Ready = { origin: string; token: string; url: string; query: string; body: string };
type Command = { cpu: true } | { close: true };
type Answer = { ready: Ready } | { cpu: number } | { error: string };
const ask = (worker: ChildProcess, command: Command | undefined) => askChild<Answer>(worker, command);

const median = (values: readonly number[]) => quantile(values, 0.5);
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

async function child(arm: string): Promise<void> {
  const { openSecurityTarget, INSERT_BODY, READ_QUERY } = await import('./lib/security-calls.js');
  const target = await openSecurityTarget(arm);
  // The served app listens already (startBasegate); the `off` app is built beside it.
  const origin = target.app.server.listening ? `http://127.0.0.1:${(target.app.server.address() as AddressInfo).port}` : await target.app.listen({ port: 0, host: '127.0.0.1' });
  const send = (answer: Answer) => process.send!(answer);
  process.on('message', (command: Command) => {
    if ('close' in command) {
      void target.close().finally(() => process.disconnect());
      return;
    }
    const used = process.cpuUsage();
    send({ cpu: used.user + used.system });
  });
  send({ ready: { origin, token: target.token, url: target.url, query: READ_QUERY, body: JSON.stringify(INSERT_BODY) } });
}

async function childCpu(worker: ChildProcess): Promise<number> {
  const answer = await ask(worker, { cpu: true });
  if (!('cpu' in answer)) throw new Error('unexpected answer');
  return answer.cpu;
}

interface Server {
  arm: string;
  worker: ChildProcess;
  ready: Ready;
  pool: Pool;
}

/** Drive `server` with the case's request from CONNECTIONS clients; its CPU per request (µs) over the measured part. */
async function window(server: Server, name: CaseName): Promise<{ cpuPerRequest: number; perSecond: number }> {
  const { ready, pool } = server;
  const headers = { authorization: `Token ${ready.token}`, 'content-type': 'application/json' };
  let answered = 0;
  let stop = false;
  const client = async () => {
    while (!stop) {
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
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const [cpu0, n0, t0] = [await childCpu(server.worker), answered, performance.now()];
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const [cpu1, n1, t1] = [await childCpu(server.worker), answered, performance.now()];
  stop = true;
  await Promise.all(clients);
  return { cpuPerRequest: (cpu1 - cpu0) / (n1 - n0), perSecond: ((n1 - n0) * 1000) / (t1 - t0) };
}

async function parent(): Promise<void> {
  const loadAtStart = load();
  const script = fileURLToPath(import.meta.url);
  // Interleaved (off, scoped, off, scoped, …): started and measured side by side, a set of one process per arm
  // at a time, so whatever drifts along the list (start order, the machine during a round) falls on every arm alike.
  const arms = Array.from({ length: PROCESSES }, () => ARM_NAMES).flat();
  const servers: Server[] = [];
  try {
    // One at a time: each child's start (migrations, seeding) has the machine to itself.
    for (const arm of arms) {
      const worker = fork(script, ['child', arm], { execArgv: ['--import', 'tsx'], env: process.env });
      const answer = await ask(worker, undefined);
      if (!('ready' in answer)) throw new Error('unexpected answer');
      servers.push({ arm, worker, ready: answer.ready, pool: new Pool(answer.ready.origin, { connections: CONNECTIONS }) });
    }
    /** figures[case][server][round]: CPU per request, µs. */
    const figures = Object.fromEntries(CASES.map((c) => [c, servers.map(() => [] as number[])])) as Record<CaseName, number[][]>;
    const rates = Object.fromEntries(CASES.map((c) => [c, servers.map(() => [] as number[])])) as Record<CaseName, number[][]>;
    for (let round = -WARMUP_ROUNDS; round < ROUNDS; round += 1) {
      for (const name of CASES) {
        for (let k = 0; k < servers.length; k += 1) {
          // Sets in an order rotating every round; within a set, the arms' order rotating too.
          const shift = Math.max(round, 0);
          const set = (Math.floor(k / ARM_NAMES.length) + shift) % PROCESSES;
          const i = set * ARM_NAMES.length + ((k + shift) % ARM_NAMES.length);
          const { cpuPerRequest, perSecond } = await window(servers[i]!, name);
          if (round < 0) continue;
          figures[name][i]!.push(cpuPerRequest);
          rates[name][i]!.push(perSecond);
        }
      }
    }
    print(servers, figures, rates, loadAtStart);
  } finally {
    for (const s of servers) {
      await s.pool.close();
      if (s.worker.connected) s.worker.send({ close: true });
    }
  }
}

function print(servers: Server[], figures: Record<CaseName, number[][]>, rates: Record<CaseName, number[][]>, loadAtStart: string): void {
  const dialect = process.env.BENCH_DATABASE_URL ? "postgres (the database server's CPU not counted)" : 'sqlite';
  console.log(
    `${dialect}; ${PROCESSES} processes per arm (${ARM_NAMES.join(', ')}), ${ROUNDS} rounds after ${WARMUP_ROUNDS} untimed; a window: ${CONNECTIONS} connections, ${SETTLE_MS} ms settling, ${WINDOW_MS} ms measured; Node ${process.version}; load ${loadAtStart} at start, ${load()} at end`,
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
      console.log(
        `  ${arm} ÷ ${base}: ${across.ratio.toFixed(1)}% across processes (95% ${across.low.toFixed(1)}–${across.high.toFixed(1)}%); within rounds median ${(median(withinRounds) * 100).toFixed(1)}% [${(quantile(withinRounds, 0.25) * 100).toFixed(1)}–${(quantile(withinRounds, 0.75) * 100).toFixed(1)}%], pooled ${byRounds.ratio.toFixed(1)}% (95% over rounds ${byRounds.low.toFixed(1)}–${byRounds.high.toFixed(1)}%)`,
      );
    }
  }
}
