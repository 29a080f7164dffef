/**
 * The single-insert webhook case in one process, for a CPU profile of the server side:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/webhooks.profile.ts   # BENCH_SINGLE_WEBHOOKS=10 BENCH_SINGLE_INSERTS=1000
 *   BENCH_SQL_TIMES=1 npx tsx bench/webhooks.profile.ts       # also: time in SQLite per statement shape
 *   BENCH_CHECKOUT=/work/main npx tsx bench/webhooks.profile.ts   # the same case on another checkout (a before/after pair)
 * Prints insert rate, commit → receipt p50/p99 and the CPU time of this process (server and the
 * in-process client; the receiver runs in a child process, without the profiler).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { startReceiverChild, webhookCases } from './lib/receiver-child.js';

/** BENCH_SQL_TIMES=1: time spent in SQLite per statement shape (numbers and parameter lists collapsed). */
const sqlTimes = new Map<string, { ms: number; n: number }>();
if (process.env.BENCH_SQL_TIMES) {
  const proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1')) as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['all', 'run', 'get', 'iterate']) {
    const original = proto[method]!;
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      const t0 = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const shape = this.source.replace(/(\?, )+\?/g, '?…').replace(/\s+/g, ' ').slice(0, 160);
        const entry = sqlTimes.get(shape) ?? { ms: 0, n: 0 };
        entry.ms += performance.now() - t0;
        entry.n += 1;
        sqlTimes.set(shape, entry);
      }
    };
  }
}

const WEBHOOKS = Number(process.env.BENCH_SINGLE_WEBHOOKS ?? 10);
const INSERTS = Number(process.env.BENCH_SINGLE_INSERTS ?? 1000);
const { port, ask, child } = await startReceiverChild();
const checkout = process.env.BENCH_CHECKOUT;
const { singleInserts } = await webhookCases();
const dir = mkdtempSync(path.join(tmpdir(), 'basegate-profile-webhooks-'));
try {
  const cpu0 = process.cpuUsage();
  const result = await singleInserts('sqlite', dir, null, { port, ask }, INSERTS, 10, undefined, WEBHOOKS);
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ checkout: checkout ?? '.', webhooks: WEBHOOKS, ...result, serverCpuMs: Math.round((cpu.user + cpu.system) / 1000) }));
  for (const [shape, { ms, n }] of [...sqlTimes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) {
    console.log(`${ms.toFixed(0).padStart(6)} ms ${String(n).padStart(7)}× ${shape}`);
  }
} finally {
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}
