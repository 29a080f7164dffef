/**
 * The operation log's cost and its listing speed, per dialect in one run:
 *  - a 1,000-row append and single-row updates with the log on and off (two apps side by side,
 *    alternating, so load changes hit both alike); reports medians and the on/off ratio;
 *  - the last 100 operations of a base and one row's history, in a base with BENCH_OPS operations
 *    (seeded by SQL) and in a base with 100.
 *
 *   npx tsx bench/history.bench.ts
 *
 * Knobs: BENCH_ITERATIONS (9), BENCH_UPDATES (200 single-row updates per round), BENCH_OPS (1000000),
 * BENCH_DIALECTS (sqlite,postgres; PostgreSQL needs TEST_DATABASE_URL).
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/index.js';
import { createTestApp, type TestApp } from '../test/helpers/index.js';
import { appendRows, gateway, type Gateway } from '../test/http/rows.fixtures.js';
import { median } from './lib/harness.js';
import { rowKey } from '../src/shared/row-key.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 9);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 200);
const OPS = Number(process.env.BENCH_OPS ?? 1_000_000);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as DialectName[];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Wall and this process's CPU time (user + system, ms) of `fn`; the CPU time is less hit by the machine's load. */
async function timedCpu(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const wall = await timed(fn);
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

async function ok(res: Promise<{ statusCode: number; body: string }>): Promise<void> {
  const r = await res;
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body}`);
}

/** No rate limits: the bench calls faster than a client may. */
const UNLIMITED = { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' };

async function overhead(dialect: DialectName) {
  const on = await createTestApp(dialect, UNLIMITED);
  const off = await createTestApp(dialect, { ...UNLIMITED, OPERATION_LOG_RETENTION_DAYS: '0' });
  const sides: Array<[string, Gateway]> = [
    ['on', await gateway(on)],
    ['off', await gateway(off)],
  ];
  const rows = Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}` }));
  type Samples = { append: number[]; update: number[]; appendCpu: number[]; updateCpu: number[] };
  const empty = (): Samples => ({ append: [], update: [], appendCpu: [], updateCpu: [] });
  const times: Record<string, Samples> = { on: empty(), off: empty() };
  for (let i = 0; i < ITERATIONS + 1; i++) {
    for (const [name, g] of i % 2 === 0 ? sides : [...sides].reverse()) {
      let ids: string[] = [];
      const append = await timedCpu(async () => (ids = await appendRows(g, 'Table1', rows)));
      const update = await timedCpu(async () => {
        for (let u = 0; u < UPDATES; u++) await ok(g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: ids[u % ids.length], row: { Name: `v${i}.${u}` } }] }));
      });
      if (i === 0) continue; // warm-up round
      times[name]!.append.push(append.wall);
      times[name]!.appendCpu.push(append.cpu);
      times[name]!.update.push(update.wall / UPDATES);
      times[name]!.updateCpu.push(update.cpu / UPDATES);
    }
  }
  const m = (name: string, k: keyof Samples) => median(times[name]![k]);
  const line = (label: string, k: keyof Samples, digits: number) =>
    `${label}: log on ${m('on', k).toFixed(digits)} ms, off ${m('off', k).toFixed(digits)} ms, ratio ${(m('on', k) / m('off', k)).toFixed(3)}`;
  console.log(`${dialect} 1000-row append ${line('wall', 'append', 1)}; ${line('CPU', 'appendCpu', 1)}`);
  console.log(`${dialect} single-row update ${line('wall', 'update', 2)}; ${line('CPU', 'updateCpu', 2)}`);
  await on.close();
  await off.close();
}

/** BENCH_OPS modify operations of one row each (1,000 rows) in a base, by SQL. */
async function seed(t: TestApp, baseId: number, count: number): Promise<void> {
  const db = t.container.db;
  // Each operation names the row its index entry points to (a row's history keeps only operations that name it).
  const changes = (n: unknown) => sql`'{"rows":[{"o":"modify_row","t":"0000","r":"row' || ${n} || '","n":"x","a":{"0000":"new"},"b":{"0000":"old"}}]}'`;
  const batch = 100_000;
  // The row index keys rows by rowKey (computed in JS): `row<n>`'s key for n < 1000, as a table to join.
  await sql`CREATE TABLE IF NOT EXISTS bench_row_keys (n bigint PRIMARY KEY, k bigint NOT NULL)`.execute(db);
  const keys = Array.from({ length: 1000 }, (_, n) => sql`(${n}, ${rowKey(`row${n}`)})`);
  await sql`INSERT INTO bench_row_keys (n, k) VALUES ${sql.join(keys)} ON CONFLICT DO NOTHING`.execute(db);
  for (let from = 0; from < count; from += batch) {
    const to = Math.min(count, from + batch) - 1;
    const series =
      t.dialect === 'postgres'
        ? sql`SELECT g AS n FROM generate_series(${from}::bigint, ${to}::bigint) g`
        : sql`WITH RECURSIVE s(n) AS (SELECT ${from} UNION ALL SELECT n + 1 FROM s WHERE n < ${to}) SELECT n FROM s`;
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO operation_log (base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts)
        SELECT ${baseId}, 'seed', 'modify_row', '0000', 'bench@auth.local', NULL, n, 1, '', NULL FROM (${series}) AS q`.execute(trx);
      await sql`UPDATE operation_log SET changes = ${changes(sql`(id % 1000)`)} WHERE base_id = ${baseId} AND write_id = 'seed' AND op_time BETWEEN ${from} AND ${to}`.execute(trx);
      await sql`INSERT INTO operation_log_rows (base_id, row_key, op_id)
        SELECT o.base_id, k.k, o.id FROM operation_log o JOIN bench_row_keys k ON k.n = o.id % 1000
         WHERE o.base_id = ${baseId} AND o.write_id = 'seed' AND o.op_time BETWEEN ${from} AND ${to}`.execute(trx);
    });
  }
}

async function listing(dialect: DialectName) {
  const t = await createTestApp(dialect, UNLIMITED);
  const big = await gateway(t);
  const small = await gateway(t);
  const seeding = await timed(() => seed(t, big.base.id, OPS));
  await seed(t, small.base.id, 100);
  if (dialect === 'postgres') await sql`ANALYZE`.execute(t.container.db);
  const measure = async (g: Gateway, suffix: string) => {
    const xs: number[] = [];
    for (let i = 0; i < 21; i++) xs.push(await timed(() => ok(g.call('GET', suffix))));
    return median(xs.slice(1));
  };
  for (const [label, suffix] of [
    ['last 100 operations', 'operations/?per_page=100'],
    ['one row’s history (100)', 'activities/?row_id=row7&per_page=100'],
    ['last 100 of one author', 'operations/?per_page=100&author=bench@auth.local'],
  ] as const) {
    const a = await measure(big, suffix);
    const b = await measure(small, suffix);
    console.log(`${dialect} ${label}: ${OPS} ops ${a.toFixed(2)} ms, 100 ops ${b.toFixed(2)} ms (seeded in ${(seeding / 1000).toFixed(1)} s)`);
  }
  await t.close();
}

for (const dialect of DIALECTS) {
  await overhead(dialect);
  await listing(dialect);
}
