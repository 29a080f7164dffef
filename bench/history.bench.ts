/**
 * The operation log's cost and its listing speed, per dialect in one run:
 *  - a 1,000-row append with the log on and off: two apps side by side, the
 *    same write on each in turn (the order flips every round), BENCH_ROUNDS measured rounds after 3
 *    warm-up rounds. Each round gives an on/off ratio of its pair, measured back to back; the median
 *    of those ratios (and their quartiles) is the figure. CPU time is this process's (the app, SQLite
 *    in it) plus that of the PostgreSQL backends serving the bench's database (/proc/<pid>/schedstat,
 *    ns), so neither the load nor other processes' work is counted;
 *  - single-row updates with the log on, on again (the A/A control) and off: three apps, one update
 *    on each per round, BENCH_UPDATE_ROUNDS rounds (updateOverhead);
 *  - the last 100 operations of a base, one row's history and an author's last 100, in a base with
 *    BENCH_OPS operations (seeded by SQL) and in a base with 100, requests alternating;
 *  - the last 100 operations when they are 100 appends of 500 rows (cells read from the rows, by id
 *    ranges and by id) against 100 updates of 500 rows (cells in the log).
 *
 *   npx tsx bench/history.bench.ts
 *
 * Knobs: BENCH_ROUNDS (41), BENCH_UPDATES (0: appends only), BENCH_UPDATE_ROUNDS (1500),
 * BENCH_OPS (1000000), BENCH_UPDATE_OPS (0: operations seeded into the updates' bases first; a comma list runs each), BENCH_ONLY (overhead | update: the updates only | listing | large: the large writes' listing only), BENCH_DIALECTS (sqlite,postgres; PostgreSQL
 * needs TEST_DATABASE_URL), BENCH_AA=1 (both apps with the log on: what the method reads as a
 * difference when there is none), BENCH_VERBOSE=1 (each round's CPU times).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/index.js';
import { createTestApp, type TestApp } from '../test/helpers/index.js';
import { appendRows, gateway, type Gateway } from '../test/http/rows.fixtures.js';
import { median } from './lib/harness.js';
import { seedOperations } from './lib/oplog-seed.js';
import { indexPendingRows } from '../src/modules/history/row-index.js';
import { cellsReadCounts, setCellsRead } from '../src/modules/history/stored-cells.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const WARMUP = 3;
const KINDS = ['append'] as const;
/** BENCH_UPDATES=0: the appends only (the updates are measured in their own rounds: updateOverhead). */
const UPDATES = Number(process.env.BENCH_UPDATES ?? 1);
/** Rounds of the single-row updates: one update on each of the three apps per round (see updateOverhead). */
const UPDATE_ROUNDS = Number(process.env.BENCH_UPDATE_ROUNDS ?? 1500);
const UPDATE_WARMUP = 50;
/**
 * Operations already in each update app's base before its rounds (BENCH_UPDATE_OPS; 0: a new base): the log's index depth.
 * A comma list (`0,1000000`) measures each case in turn in one run.
 */
const UPDATE_OPS_LIST = (process.env.BENCH_UPDATE_OPS ?? '0').split(',').map(Number);
/** Rounds between two runs of the row index's batch step in the log-on apps (see updateOverhead). */
const BATCH_EVERY = 100;
/** Resamples of the rounds for the 95% intervals. */
const BOOTSTRAP = 1000;
/** Requests per listing and base. */
const LISTINGS = 41;
/** Requests per base for the large writes' listing (each returns 50,000 rows' cells). */
const LARGE_LISTINGS = 11;
const OPS = Number(process.env.BENCH_OPS ?? 1_000_000);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as DialectName[];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * CPU time (ms) of the PostgreSQL backends serving the bench's database, from /proc/<pid>/schedstat
 * (nanoseconds; /proc/<pid>/stat counts 10 ms ticks, too coarse for a 5 ms write). Both apps share
 * the database and run one after the other, so the backends' time during a write is that write's.
 */
class ServerCpu {
  private readonly client: pg.Client;
  private pids: number[] = [];
  constructor(url: string) {
    this.client = new pg.Client({ connectionString: url });
  }
  async open(): Promise<void> {
    await this.client.connect();
  }
  /** The database's client backends but this one (new pool connections appear between writes). */
  async refresh(): Promise<void> {
    const { rows } = await this.client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    this.pids = rows.map((r) => r.pid);
  }
  /** Each backend's CPU time so far (ms). */
  read(): Map<number, number> {
    const ms = new Map<number, number>();
    for (const pid of this.pids) {
      try {
        ms.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
      } catch {
        // the backend ended (its connection closed)
      }
    }
    return ms;
  }
  /** The backends' CPU time since `before`, of those alive at both ends (a backend that ended between is left out, not counted as negative). */
  since(before: Map<number, number>): number {
    let ms = 0;
    for (const [pid, now] of this.read()) {
      const then = before.get(pid);
      if (then !== undefined) ms += now - then;
    }
    return ms;
  }
  async close(): Promise<void> {
    await this.client.end();
  }
}

/**
 * CPU time (ms) of this process, all threads (the app, SQLite in it, and the garbage collection its
 * allocations cause), from getrusage: exact to the microsecond. (The thread's own schedstat is only
 * brought up to date at scheduler ticks while it runs: too coarse for a 1 ms section.)
 */
function processCpu(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/**
 * The log's own CPU time in the app, measured where it runs (steadier than the on/off difference):
 * the hook's synchronous part (building the changes, JSON, deflate: everything before its first
 * query) and, on SQLite, the log's statements inside SQLite (`INSERT INTO operation_log…`).
 */
const own = { ms: 0 };
function attributeLog(t: TestApp): void {
  const hooks = (t.container.baseData.writer as unknown as { logHooks: Array<(...args: unknown[]) => Promise<void>> }).logHooks;
  const hook = hooks[0]!;
  hooks[0] = (...args) => {
    const start = processCpu();
    const pending = hook(...args);
    own.ms += processCpu() - start;
    return pending;
  };
}
if (DIALECTS.includes('sqlite')) {
  const proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['run', 'all', 'get']) {
    const original = proto[method]!;
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      if (!this.source.startsWith('INSERT INTO operation_log')) return original.apply(this, args);
      const start = processCpu();
      try {
        return original.apply(this, args);
      } finally {
        own.ms += processCpu() - start;
      }
    };
  }
}

/** Wall time, and CPU time (ms) of this process plus the database server's backends. */
async function measured(server: ServerCpu | undefined, fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  await server?.refresh();
  const serverBefore = server?.read();
  const cpu = processCpu();
  const wall = await timed(fn);
  const used = processCpu() - cpu;
  return { wall, cpu: used + (server && serverBefore ? server.since(serverBefore) : 0) };
}

async function ok(res: Promise<{ statusCode: number; body: string }>): Promise<void> {
  const r = await res;
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body}`);
}

/** No rate limits: the bench calls faster than a client may. */
const UNLIMITED = { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' };

const quantile = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
};

/**
 * The 1,000-row append, log on against log off: two apps side by side, the same write on each in turn (the order flips
 * every round), ROUNDS measured rounds after WARMUP. Each round gives an on/off ratio of the pair
 * measured back to back; the median of those ratios, with their quartiles, is the figure (load that
 * changes between rounds cancels within a pair).
 */
async function overhead(dialect: DialectName) {
  const on = await createTestApp(dialect, UNLIMITED);
  const off = await createTestApp(dialect, process.env.BENCH_AA ? UNLIMITED : { ...UNLIMITED, OPERATION_LOG_RETENTION_DAYS: '0' });
  const server = dialect === 'postgres' ? new ServerCpu(process.env.TEST_DATABASE_URL!) : undefined;
  await server?.open();
  if (!process.env.BENCH_AA) attributeLog(on);
  const ownMs = { append: [] as number[] };
  const sides: Array<[string, Gateway]> = [
    ['on', await gateway(on)],
    ['off', await gateway(off)],
  ];
  const rows = Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}` }));
  const ids = new Map<string, string[]>();
  type Kind = 'append';
  const samples = { append: { on: [] as Array<{ wall: number; cpu: number }>, off: [] as Array<{ wall: number; cpu: number }> } };
  const write: Record<Kind, (name: string, g: Gateway, round: number) => Promise<void>> = {
    append: async (name, g) => {
      ids.set(name, await appendRows(g, 'Table1', rows));
    },
  };
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const kind of KINDS) {
      for (const [name, g] of round % 2 === 0 ? sides : [...sides].reverse()) {
        own.ms = 0;
        const m = await measured(server, () => write[kind](name, g, round));
        if (round < WARMUP) continue;
        if (name === 'on') ownMs[kind].push(own.ms);
        samples[kind][name as 'on' | 'off'].push(m);
      }
    }
  }
  for (const kind of KINDS) {
    const s = samples[kind];
    const parts = (['cpu', 'wall'] as const).map((k) => {
      const ratios = s.on.map((x, i) => x[k] / s.off[i]![k]);
      const digits = 1;
      return `${k}: on ${median(s.on.map((x) => x[k])).toFixed(digits)} ms, off ${median(s.off.map((x) => x[k])).toFixed(digits)} ms, ratio ${median(ratios).toFixed(3)} (quartiles ${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)})`;
    });
    if (process.env.BENCH_VERBOSE) console.log(s.on.map((x, i) => `${x.cpu.toFixed(1)}/${s.off[i]!.cpu.toFixed(1)}`).join(' '));
    console.log(`${dialect} 1000-row append, ${ROUNDS} rounds, load ${loadavg()[0]!.toFixed(1)}: ${parts.join('; ')}`);
    const ownMedian = median(ownMs[kind]);
    const where = dialect === 'sqlite' ? 'building the changes + its statements in SQLite' : 'building the changes (its SQL runs in the write\'s one statement, not counted)';
    console.log(`${dialect} ${kind}: the log's own CPU in the app (${where}): ${ownMedian.toFixed(2)} ms, ${((100 * ownMedian) / median(s.off.map((x) => x.cpu))).toFixed(1)}% of the log-off write's CPU`);
  }
  await server?.close();
  await on.close();
  await off.close();
}

/**
 * The single-row update, log on against log off, with its A/A control beside: THREE apps (log on,
 * a second with the log on, log off), one update on each per round in a shuffled order, so every
 * round measures the three under the same load; UPDATE_ROUNDS rounds after UPDATE_WARMUP. A 1 ms
 * update's CPU time scatters by tens of percent (garbage collection, WAL checkpoints, other
 * processes' cache traffic), so blocks of 20 compared block by block (the method of the appends)
 * read quartiles of 0.7–1.6; thousands of single updates interleaved give the medians and means to
 * a percent or two. The figures: median on / median off and mean on / mean off (the mean counts the
 * rare costly ones: a checkpoint the log's pages brought forward, a collection of its garbage),
 * each with a 95% bootstrap interval over the rounds; the same two for on / on′, which differ in
 * nothing: what the method reads when there is no difference.
 */
async function updateOverhead(dialect: DialectName, UPDATE_OPS: number) {
  const names = ['on', 'on2', 'off'] as const;
  type Arm = (typeof names)[number];
  const apps = {
    on: await createTestApp(dialect, UNLIMITED),
    on2: await createTestApp(dialect, UNLIMITED),
    off: await createTestApp(dialect, { ...UNLIMITED, OPERATION_LOG_RETENTION_DAYS: '0' }),
  };
  const server = dialect === 'postgres' ? new ServerCpu(process.env.TEST_DATABASE_URL!) : undefined;
  await server?.open();
  const arms = {} as Record<Arm, { g: Gateway; ids: string[]; cpu: number[] }>;
  for (const name of names) {
    const g = await gateway(apps[name]);
    arms[name] = { g, ids: await appendRows(g, 'Table1', Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}` }))), cpu: [] };
    // A long log beforehand, in every app (the log-off one too: the same database size), its row index complete.
    if (UPDATE_OPS > 0) {
      await seedOperations(apps[name], g.base.id, UPDATE_OPS, 1000);
      await indexPendingRows(apps[name].container.db);
    }
  }
  const batches = { on: 0, on2: 0 };
  // Garbage collection pauses (main thread) inside each arm's updates: where the rare costly ones come from.
  let gcNow = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcNow += e.duration;
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const gcByArm = { on: 0, on2: 0, off: 0 } as Record<Arm, number>;
  for (let round = 0; round < UPDATE_WARMUP + UPDATE_ROUNDS; round++) {
    const order = [...names].sort(() => Math.random() - 0.5);
    for (const name of order) {
      const arm = arms[name];
      const gcBefore = gcNow;
      const m = await measured(server, () => ok(arm.g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: arm.ids[round % arm.ids.length], row: { Name: `v${round}` } }] })));
      if (round >= UPDATE_WARMUP) {
        arm.cpu.push(m.cpu);
        gcByArm[name] += gcNow - gcBefore;
      }
    }
    // SQLite writes a single-row change's row-index entry later, in a batch (row-index.ts; a tick
    // every 5 s in the app): run it here every 100 rounds and count it to the log-on apps.
    if ((round + 1) % BATCH_EVERY === 0) {
      for (const name of ['on', 'on2'] as const) {
        const m = await measured(server, () => indexPendingRows(apps[name].container.db));
        if (round >= UPDATE_WARMUP) batches[name] += m.cpu;
      }
    }
  }
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  /** stat(a) / stat(b) and its 95% interval, resampling whole rounds (a round's three updates stay together). */
  const ratio = (a: readonly number[], b: readonly number[], stat: (xs: readonly number[]) => number) => {
    const rs: number[] = [];
    for (let i = 0; i < BOOTSTRAP; i++) {
      const pick = Array.from({ length: a.length }, () => Math.floor(Math.random() * a.length));
      rs.push(stat(pick.map((j) => a[j]!)) / stat(pick.map((j) => b[j]!)));
    }
    return `${(stat(a) / stat(b)).toFixed(3)} (95% ${quantile(rs, 0.025).toFixed(3)}–${quantile(rs, 0.975).toFixed(3)})`;
  };
  const [on, on2, off] = [arms.on.cpu, arms.on2.cpu, arms.off.cpu];
  console.log(
    `${dialect} single-row update, ${UPDATE_ROUNDS} interleaved rounds, ${UPDATE_OPS} operations before, load ${loadavg()[0]!.toFixed(1)}: CPU median on ${(median(on) * 1000).toFixed(0)} µs, on′ ${(median(on2) * 1000).toFixed(0)} µs, off ${(median(off) * 1000).toFixed(0)} µs; mean on ${(mean(on) * 1000).toFixed(0)} µs, off ${(mean(off) * 1000).toFixed(0)} µs`,
  );
  console.log(`${dialect} single-row update, log on / off:   medians ${ratio(on, off, median)}, means ${ratio(on, off, mean)}`);
  // The batches' CPU spread over the updates they indexed (0 on PostgreSQL: written with the update).
  const withBatches = (xs: readonly number[], total: number) => xs.map((x) => x + total / xs.length);
  console.log(
    `${dialect} single-row update, the row index's batches: ${((batches.on / on.length) * 1000).toFixed(1)} µs per update; log on with them / off: medians ${ratio(withBatches(on, batches.on), off, median)}, means ${ratio(withBatches(on, batches.on), off, mean)}; A/A with them: means ${ratio(withBatches(on, batches.on), withBatches(on2, batches.on2), mean)}`,
  );
  console.log(`${dialect} single-row update, A/A on / on′:   medians ${ratio(on, on2, median)}, means ${ratio(on, on2, mean)}`);
  gcObserver.disconnect();
  const tail = (xs: readonly number[]) => `p90 ${(quantile(xs, 0.9) * 1000).toFixed(0)} µs, p99 ${(quantile(xs, 0.99) * 1000).toFixed(0)} µs`;
  console.log(
    `${dialect} single-row update, tails: on ${tail(on)}, on′ ${tail(on2)}, off ${tail(off)}; GC pauses per update: on ${((gcByArm.on / on.length) * 1000).toFixed(0)} µs, on′ ${((gcByArm.on2 / on2.length) * 1000).toFixed(0)} µs, off ${((gcByArm.off / off.length) * 1000).toFixed(0)} µs`,
  );
  await server?.close();
  for (const name of names) await apps[name].close();
}

/**
 * Listing speed in a base with BENCH_OPS operations beside one with 100: the last 100 operations, one
 * row's history (`row0`: BENCH_OPS / 1,000 operations in the big base, all 100 in the small one, so
 * both pages are full), an author's last 100. Requests alternate between the bases; medians of 41, wall and CPU.
 */
async function listing(dialect: DialectName) {
  const t = await createTestApp(dialect, UNLIMITED);
  const big = await gateway(t);
  const small = await gateway(t);
  const seeding = await timed(() => seedOperations(t, big.base.id, OPS, 1000));
  await seedOperations(t, small.base.id, 100, 1);
  // PostgreSQL plans by statistics and reads index-only once the visibility map is set, as
  // autovacuum leaves a log that has been there a while; SQLite without statistics walks the
  // (base, id) index, as it does in service.
  if (dialect === 'postgres') await sql`VACUUM ANALYZE operation_log, operation_log_rows`.execute(t.container.db);
  const stored = await sql<{ n: number }>`SELECT count(*) AS n FROM operation_log WHERE base_id = ${big.base.id}`.execute(t.container.db);
  console.log(`${dialect}: ${Number(stored.rows[0]!.n)} operations seeded in ${(seeding / 1000).toFixed(1)} s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
  const server = dialect === 'postgres' ? new ServerCpu(process.env.TEST_DATABASE_URL!) : undefined;
  await server?.open();
  for (const [label, suffix] of [
    ['last 100 operations', 'operations/?per_page=100'],
    ['one row’s history (activities, 100)', 'activities/?row_id=row0&per_page=100'],
    ['one row’s operations (100)', 'operations/?row_id=row0&per_page=100'],
    ['last 100 of one author', 'operations/?per_page=100&author=bench@auth.local'],
  ] as const) {
    const times = { big: [] as Array<{ wall: number; cpu: number }>, small: [] as Array<{ wall: number; cpu: number }> };
    for (let i = 0; i < LISTINGS + 1; i++) {
      for (const [name, g] of i % 2 === 0 ? ([['big', big], ['small', small]] as const) : ([['small', small], ['big', big]] as const)) {
        const m = await measured(server, async () => {
          const res = await g.call('GET', suffix);
          if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
          const body = res.json<{ operations?: unknown[]; activities?: unknown[] }>();
          if ((body.operations ?? body.activities)!.length !== 100) throw new Error(`${suffix}: ${name} not a full page`);
        });
        if (i > 0) times[name].push(m);
      }
    }
    const part = (k: 'wall' | 'cpu') => {
      const a = median(times.big.map((x) => x[k]));
      const b = median(times.small.map((x) => x[k]));
      return `${k} ${a.toFixed(2)} ms vs ${b.toFixed(2)} ms (ratio ${(a / b).toFixed(2)})`;
    };
    console.log(`${dialect} ${label}, ${OPS} ops vs 100, medians of ${LISTINGS}, load ${loadavg()[0]!.toFixed(1)}: ${part('cpu')}; ${part('wall')}`);
  }
  await largeWrites(t, server);
  await server?.close();
  await t.close();
}

/**
 * The last 100 operations of a base whose last 100 writes were appends of 500 rows (logged without
 * their cells, filled in from the rows when read: insert-cells.ts) beside a base whose last 100 were
 * updates of 500 rows (cells in the log): 50,000 rows' cells either way. The appends are listed twice
 * per round: their cells read by id ranges (stored-cells.ts; SQLite reads by id either way) and by id
 * (`HISTORY_CELLS_READ=ids`, the earlier read), so before and after are measured in the same run.
 * Medians of LARGE_LISTINGS requests per arm, the arms' order rotating.
 */
async function largeWrites(t: TestApp, server: ServerCpu | undefined) {
  const appendBase = await gateway(t);
  const updates = await gateway(t);
  const rows = Array.from({ length: 500 }, (_, i) => ({ Name: `row ${i}` }));
  for (let i = 0; i < 100; i++) await appendRows(appendBase, 'Table1', rows);
  const ids = await appendRows(updates, 'Table1', rows);
  for (let i = 0; i < 100; i++) await ok(updates.call('PUT', 'rows/', { table_name: 'Table1', updates: ids.map((id, j) => ({ row_id: id, row: { Name: `v${i}.${j}` } })) }));
  const arms = [
    { name: 'appends', g: appendBase, read: 'ranges', opType: 'insert_rows' },
    { name: 'appends by id', g: appendBase, read: 'ids', opType: 'insert_rows' },
    { name: 'updates', g: updates, read: 'ranges', opType: 'modify_rows' },
  ] as const;
  const times = new Map<string, Array<{ wall: number; cpu: number }>>(arms.map((a) => [a.name, []]));
  const counts = { ...cellsReadCounts };
  for (let i = 0; i < LARGE_LISTINGS + 1; i++) {
    for (let k = 0; k < arms.length; k++) {
      const arm = arms[(i + k) % arms.length]!;
      setCellsRead(arm.read);
      const m = await measured(server, async () => {
        const res = await arm.g.call('GET', 'operations/?per_page=100');
        if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
        const ops = res.json<{ operations: Array<{ op_type: string }> }>().operations;
        if (ops.length !== 100 || ops.some((o) => o.op_type !== arm.opType)) throw new Error(`${arm.name}: not 100 large ${arm.opType}`);
      });
      if (i > 0) times.get(arm.name)!.push(m);
    }
  }
  setCellsRead('ranges');
  const med = (name: string, k: 'wall' | 'cpu') => median(times.get(name)!.map((x) => x[k]));
  const part = (name: string, k: 'wall' | 'cpu') => `${k} ${med(name, k).toFixed(1)} ms (ratio ${(med(name, k) / med('updates', k)).toFixed(2)})`;
  const read = `rows read by range ${cellsReadCounts.rangeRows - counts.rangeRows}, by id ${cellsReadCounts.byIdRows - counts.byIdRows}`;
  console.log(
    `${t.dialect} last 100 operations, 100 appends of 500 rows vs 100 updates of 500 rows, medians of ${LARGE_LISTINGS}, load ${loadavg()[0]!.toFixed(1)}: ` +
      `updates cpu ${med('updates', 'cpu').toFixed(1)} ms, wall ${med('updates', 'wall').toFixed(1)} ms; ` +
      `appends ${part('appends', 'cpu')}, ${part('appends', 'wall')}; appends by id ${part('appends by id', 'cpu')}, ${part('appends by id', 'wall')} (${read})`,
  );
}

const ONLY = process.env.BENCH_ONLY;
for (const dialect of DIALECTS) {
  if (ONLY === 'large') {
    const t = await createTestApp(dialect, UNLIMITED);
    const server = dialect === 'postgres' ? new ServerCpu(process.env.TEST_DATABASE_URL!) : undefined;
    await server?.open();
    await largeWrites(t, server);
    await server?.close();
    await t.close();
    continue;
  }
  if (ONLY !== 'listing' && ONLY !== 'update') await overhead(dialect);
  if ((ONLY === undefined || ONLY === 'overhead' || ONLY === 'update') && UPDATES > 0) for (const ops of UPDATE_OPS_LIST) await updateOverhead(dialect, ops);
  if (ONLY === 'update') continue;
  if (ONLY !== 'overhead') await listing(dialect);
}
