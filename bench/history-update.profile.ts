/**
 * What the operation log costs a single-row update (SQLite by default): ONE app and base, the log's
 * hook switched off and on between blocks of BENCH_UPDATES single-row updates (same database, same
 * heap, so only the log differs), CPU time per update (getrusage), median of per-pair ratios.
 * PROFILE_STATEMENTS=1 also times the SQLite statements of the "on" blocks (adds its own overhead).
 *
 *   npx tsx bench/history-update.profile.ts        (PROFILE_BLOCKS=80, BENCH_UPDATES=40)
 */
import { loadavg } from 'node:os';
import SQLite from 'better-sqlite3';
import type { DialectName } from '../src/db/index.js';
import { createTestApp } from '../test/helpers/index.js';
import { appendRows, gateway } from '../test/http/rows.fixtures.js';
import { median } from './lib/harness.js';

const BLOCKS = Number(process.env.PROFILE_BLOCKS ?? 80);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 40);
const WARMUP = 6;
const DIALECT = (process.env.PROFILE_DIALECT ?? 'sqlite') as DialectName;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const perStatement = new Map<string, number>();
let counting = false;
if (process.env.PROFILE_STATEMENTS) {
  const proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['run', 'all', 'get', 'iterate']) {
    const original = proto[method]!;
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      if (!counting) return original.apply(this, args);
      const start = cpu();
      try {
        return original.apply(this, args);
      } finally {
        perStatement.set(this.source, (perStatement.get(this.source) ?? 0) + cpu() - start);
      }
    };
  }
}

const t = await createTestApp(DIALECT, { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
const g = await gateway(t);
const hooks = (t.container.baseData.writer as unknown as { logHooks: unknown[] }).logHooks;
const hook = hooks[0];
const ids = await appendRows(g, 'Table1', Array.from({ length: 200 }, (_, i) => ({ Name: `row ${i}` })));
const per = { on: [] as number[], off: [] as number[] };
let n = 0;
for (let block = 0; block < WARMUP + BLOCKS; block++) {
  for (const side of block % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
    hooks.length = 0;
    if (side === 'on') hooks.push(hook);
    counting = side === 'on' && block >= WARMUP;
    const start = cpu();
    for (let u = 0; u < UPDATES; u++) {
      const res = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: ids[n++ % ids.length], row: { Name: `v${block}.${u}` } }] });
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    const used = (cpu() - start) / UPDATES;
    counting = false;
    if (block >= WARMUP) per[side].push(used);
  }
}
hooks.length = 0;
hooks.push(hook);
const ratios = per.on.map((x, i) => x / per.off[i]!);
const q = (p: number) => [...ratios].sort((a, b) => a - b)[Math.floor(p * (ratios.length - 1))]!;
const diff = per.on.map((x, i) => x - per.off[i]!);
console.log(
  `${DIALECT}, load ${loadavg()[0]!.toFixed(1)}: CPU per update on ${median(per.on).toFixed(3)} ms, off ${median(per.off).toFixed(3)} ms; ratio median ${median(ratios).toFixed(3)} (quartiles ${q(0.25).toFixed(3)}–${q(0.75).toFixed(3)}); on − off median ${(median(diff) * 1000).toFixed(0)} µs`,
);
const total = BLOCKS * UPDATES;
for (const [k, v] of [...perStatement].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`${((v / total) * 1000).toFixed(1).padStart(7)} µs  ${k.replace(/\s+/g, ' ').trim().slice(0, 100)}`);
await t.close();
