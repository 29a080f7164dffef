/**
 * Big tables (issue 34): the same uncached requests on a 1,000-row table and a `BENCH_ROWS`-row table
 * (default 100,000) of one base, in one run — first with no row index (the way before issue 34), then
 * with the row indexes the requests themselves cause (rows/row-indexes.ts; built in the background,
 * awaited here). Every request differs from the one before (thresholds, offsets) and the base's page
 * cache is evicted before each, so nothing is answered from a cache.
 *
 *   npx tsx bench/big-tables.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/big-tables.bench.ts
 *
 * Prints per case the median and p99 in ms for the small table, the big table without and with indexes,
 * and the ratio big (indexed) / small — the issue's aim is within 3×. Knobs: BENCH_ROWS (100000),
 * BENCH_REQUESTS (15 per case and mode), BENCH_ONLY (a part of the case names; several separated by |; `first desc` for the
 * first descending sort with only the ascending index, measured last with and without the backward read; `walk first` for the
 * filtered cases with and without the walk in id order before the probe), BENCH_SKIP_UNINDEXED=1 (no pass
 * without indexes: for 10,000,000 rows; the small and the big table are then measured request by request
 * in turn, once the big table's indexes are built), BENCH_SEARCH_READS=0 (searches and SQL LIKE read without the
 * trigram index: the way before rows/search-index.ts), BENCH_REUSE=1 (the Small and Big tables an earlier run
 * left in BENCH_DATABASE_URL, BENCH_ROWS rows, measured again without seeding: 8 minutes saved at
 * 10,000,000 rows; implies BENCH_SKIP_UNINDEXED). The big table's rows after the first 1,000 are generated
 * straight into storage (lib/big-table-data.ts).
 */
import { loadavg } from 'node:os';
import { filterToSql, indexableTerms, parseFilters } from '../src/modules/filters/index.js';
import { indexUses } from '../src/modules/rows/index.js';
import { matchingRows } from '../src/modules/notifications/deadline.repository.js';
import { setHeapGrowth } from '../src/platform/heap-growth.js';
import { startBasegate, type RunningBasegate } from './lib/servers.js';
import { BIG_TABLE_COLUMNS, BIG_TABLE_KINDS, bigTableRow, generateRows } from './lib/big-table-data.js';

const BIG = Number(process.env.BENCH_ROWS ?? 100_000);
const SMALL = 1_000;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 15);
const ONLY = process.env.BENCH_ONLY;
/** BENCH_SKIP_UNINDEXED=1: no pass without row indexes (at 10,000,000 rows each such request scans the table). */
/** BENCH_REUSE=1: the tables of an earlier run in the same database, not seeded again (their indexes are there: no pass without). */
const REUSE = process.env.BENCH_REUSE === '1';
const SKIP_UNINDEXED = REUSE || process.env.BENCH_SKIP_UNINDEXED === '1';
const KINDS = BIG_TABLE_KINDS;
const DAY = 86_400_000;

type Ctx = { b: RunningBasegate; baseId: number; table: string; rows: number; tableId: string };
type Case = { name: string; run: (c: Ctx, i: number) => Promise<void> };

async function call(c: Ctx, method: 'GET' | 'POST', suffix: string, payload?: object): Promise<unknown> {
  const res = await c.b.app.inject({
    method,
    url: `/api-gateway/api/v2/dtables/${c.b.seeded.base.uuid}/${suffix}`,
    headers: { authorization: `Token ${c.b.seeded.baseToken}` },
    ...(payload ? { payload } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`${method} ${suffix}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

/** A threshold in [0, rows) that differs per request. */
const threshold = (c: Ctx, i: number, width: number) => Math.floor(((i * 7919) % 97) / 97 * (c.rows - width));

const CASES: Case[] = [
  {
    name: 'filtered read 1%',
    run: async (c, i) => {
      const t = threshold(c, i, c.rows / 100);
      await call(c, 'POST', `filtered-rows/?table_name=${c.table}&limit=100`, {
        filters: [
          { column_name: 'Amount', filter_predicate: 'greater_or_equal', filter_term: t },
          { column_name: 'Amount', filter_predicate: 'less', filter_term: t + c.rows / 100 },
        ],
      });
    },
  },
  {
    name: 'filtered read 0.01%',
    run: async (c, i) => {
      const width = Math.max(1, c.rows / 10_000);
      const t = threshold(c, i, width);
      await call(c, 'POST', `filtered-rows/?table_name=${c.table}&limit=100`, {
        filters: [
          { column_name: 'Amount', filter_predicate: 'greater_or_equal', filter_term: t },
          { column_name: 'Amount', filter_predicate: 'less', filter_term: t + width },
        ],
      });
    },
  },
  {
    name: 'filtered read by option',
    run: async (c, i) => {
      await call(c, 'POST', `filtered-rows/?table_name=${c.table}&limit=100&start=${i}`, {
        filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: KINDS[i % KINDS.length] }],
      });
    },
  },
  // A search: `contains` on a text column has no row index (a substring would need trigrams), so it reads rows in id
  // order until its page is full — a common term soon, a term only the last rows hold the whole table.
  {
    name: 'search (contains), common term',
    run: async (c, i) => void (await call(c, 'POST', `filtered-rows/?table_name=${c.table}&limit=100`, { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: `row ${42 + (i % 50)}` }] })),
  },
  {
    name: 'search (contains), rare term',
    run: async (c, i) => void (await call(c, 'POST', `filtered-rows/?table_name=${c.table}&limit=100`, { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: `row ${c.rows - 1 - (i % 50)}` }] })),
  },
  { name: 'sort on a non-key column', run: async (c, i) => void (await call(c, 'GET', `rows/?table_name=${c.table}&order_by=Amount&limit=100&start=${i}${i % 2 ? '&direction=desc' : ''}`)) },
  // A jump deep into the table (an offset: nothing known before it), and the next pages after one.
  { name: 'deep page, jump (unsorted)', run: async (c, i) => void (await call(c, 'GET', `rows/?table_name=${c.table}&limit=100&start=${c.rows - 100 - (i % 50)}`)) },
  {
    name: 'deep page, next (unsorted)',
    run: async (c, i) => void (await call(c, 'GET', `rows/?table_name=${c.table}&limit=100&start=${Math.floor(c.rows / 2) + (i + 1) * 100}`)),
  },
  {
    name: 'SQL predicate LIMIT 100',
    run: async (c, i) => void (await call(c, 'POST', 'sql/', { sql: `SELECT * FROM ${c.table} WHERE Amount > ${c.rows - 50 - i} LIMIT 100`, convert_keys: true })),
  },
  // LIKE through the SQL endpoint: a trigram index of the big table narrows both by the pattern's literal runs (rows/search-index.ts).
  { name: 'SQL LIKE, common term', run: async (c, i) => void (await call(c, 'POST', 'sql/', { sql: `SELECT * FROM ${c.table} WHERE Title LIKE '%row ${42 + (i % 50)}%' LIMIT 100`, convert_keys: true })) },
  { name: 'SQL LIKE, rare term', run: async (c, i) => void (await call(c, 'POST', 'sql/', { sql: `SELECT * FROM ${c.table} WHERE Title LIKE '%row ${c.rows - 1 - (i % 50)}%' LIMIT 100`, convert_keys: true })) },
  { name: 'SQL aggregate GROUP BY', run: async (c) => void (await call(c, 'POST', 'sql/', { sql: `SELECT Kind, COUNT(*) FROM ${c.table} GROUP BY Kind`, convert_keys: true })) },
  {
    name: 'deadline scan (due in 3 days)',
    run: async (c, i) => {
      // The deadline scan's read: the filter engine's window, walked through the Due index's range once built, else by id (notifications/deadline-scan.ts).
      const meta = await c.b.container.baseData.writer.read({ id: c.baseId, uuid: c.b.seeded.base.uuid });
      const table = meta.tables.find((t) => t.name === c.table)!;
      const parsed = parseFilters({ filters: [{ column_name: 'Due', filter_predicate: 'is_within', filter_term_modifier: 'the_next_numbers_of_days', filter_term: 3 }] }, table.columns);
      if (!parsed.ok) throw new Error(parsed.error);
      const now = Date.UTC(2026, 0, 1) + (i % 300) * DAY;
      const where = filterToSql(parsed.filter, { now, timeZone: 'UTC' }, c.b.container.dialect);
      // As deadline-scan.ts: the use noted (an index is built for a big table), the index picked.
      const indexes = c.b.container.baseData.indexes;
      indexes.note(c.baseId, table, indexUses(table, [parsed.filter.root], []));
      const terms = indexableTerms(parsed.filter, { now, timeZone: 'UTC' }, c.b.container.dialect);
      const range = indexes.rangeRead(c.baseId, table._id, terms);
      const read = range ? { range } : { indexedBy: await indexes.hint(c.baseId, table._id, terms, undefined) };
      for await (const page of matchingRows(c.b.container.db, c.baseId, table._id, where, 500, read)) void page;
    },
  },
  {
    name: 'single-row insert',
    run: async (c, i) => void (await call(c, 'POST', 'rows/', { table_name: c.table, row: { Title: `new ${i}`, Amount: i, Kind: 'alpha', Due: '2026-05-01' } })),
  },
];

const row = (n: number, rows: number) => bigTableRow(n, rows);

const BACKWARD = 'first desc sort, asc index only';

/**
 * A first descending sort on Title (no other case sorts or filters on it) while only its ascending index
 * exists (the descending one held from being built: `maxIndexes`): the pages 0…900 of 100 rows each,
 * before (`reverseReads` off: the table read and sorted) and after (the ascending index read backwards,
 * rows/backward-sort-read.ts), on both tables.
 */
async function backwardSort(small: Ctx, big: Ctx): Promise<void> {
  const indexes = big.b.container.baseData.indexes;
  const kase: Case = {
    name: BACKWARD,
    run: async (c, i) => {
      // No page end known: each request a first read at its start (otherwise it continues by keyset from the one before).
      c.b.container.baseData.rows.positions.clear();
      await call(c, 'GET', `rows/?table_name=${c.table}&order_by=Title&direction=desc&limit=100&start=${(i % 10) * 100}`);
    },
  };
  indexes.options.minRows = 0;
  indexes.options.maxIndexes = 2_000;
  const buildStart = Date.now();
  for (const c of [small, big]) await call(c, 'GET', `rows/?table_name=${c.table}&order_by=Title&limit=1`);
  await indexes.idle();
  console.log(`\nTitle's ascending indexes built in ${((Date.now() - buildStart) / 1000).toFixed(1)} s; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  indexes.options.maxIndexes = indexes.count();
  const result: Record<string, { p50: number; p99: number }> = {};
  for (const reverse of [false, true]) {
    indexes.options.reverseReads = reverse;
    for (const c of [small, big]) result[`${reverse ? 'after' : 'before'} ${c.rows}`] = await measure(c, kase);
  }
  indexes.options.reverseReads = true;
  const kinds = (await indexes.indexesOf(big.baseId, big.tableId)).map((e) => `${e.column_key}:${e.kind}`).join(', ');
  console.log(`${BACKWARD} (indexes of the big table: ${kinds}); load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const mode of ['before', 'after']) {
    const s = result[`${mode} ${small.rows}`]!;
    const b = result[`${mode} ${big.rows}`]!;
    console.log(`  ${mode.padEnd(6)} 1k p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} | big p50 ${b.p50.toFixed(1)} p99 ${b.p99.toFixed(1)} | big/1k p50 ${(b.p50 / s.p50).toFixed(2)}×`);
  }
}

const WALK = 'walk first';
/**
 * The filtered cases on the big table with the walk first (rows/rows.service.ts walkFirst: an unsorted
 * filtered page looked for in `walkWindow` rows in id order before the filter's index is probed) and
 * without it (`walkWindow` 0: the probe first, as before), alternating per request. The walk's memory of
 * which way found the last page of a filter on the same columns is forgotten before each request, so each
 * is a first guess: the walk's worst case for a narrow filter (the 0.01% one), as well as its best.
 */
async function walkFirst(big: Ctx): Promise<void> {
  const indexes = big.b.container.baseData.indexes;
  const window = indexes.options.walkWindow;
  const filtered = CASES.filter((k) => k.name.startsWith('filtered'));
  console.log(`\n${WALK}: ${window} rows walked before the probe, against the probe first; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const kase of filtered) {
    const times: Record<'walk' | 'probe', number[]> = { walk: [], probe: [] };
    await kase.run(big, 999);
    for (let i = 0; i < REQUESTS * 2; i++) {
      const mode = i % 2 === 0 ? 'walk' : 'probe';
      indexes.options.walkWindow = mode === 'walk' ? window : 0;
      indexes.forgetWalks();
      big.b.container.baseData.snapshots.evict(big.baseId);
      const start = process.hrtime.bigint();
      await kase.run(big, Math.floor(i / 2));
      times[mode].push(ms(process.hrtime.bigint() - start));
    }
    indexes.options.walkWindow = window;
    const w = { p50: quantile(times.walk, 0.5), p99: quantile(times.walk, 0.99) };
    const p = { p50: quantile(times.probe, 0.5), p99: quantile(times.probe, 0.99) };
    console.log(`  ${kase.name.padEnd(26)} walk first p50 ${w.p50.toFixed(1)} p99 ${w.p99.toFixed(1)} | probe first p50 ${p.p50.toFixed(1)} p99 ${p.p99.toFixed(1)} | walk/probe p50 ${(w.p50 / p.p50).toFixed(2)}×`);
  }
}

async function seed(b: RunningBasegate, table: string, rows: number): Promise<string> {
  const created = (await call({ b } as Ctx, 'POST', 'tables/', {
    table_name: table,
    columns: BIG_TABLE_COLUMNS,
  })) as { _id: string };
  // The first 1,000 rows through the API (cells converted as users' are), the rest copied from them in
  // SQL with new ids and cells: seeding 100,000 rows through the API takes most of a minute on a busy machine.
  await call({ b } as Ctx, 'POST', 'rows/', { table_name: table, rows: Array.from({ length: Math.min(1000, rows) }, (_, j) => row(j, rows)) });
  const meta = await b.container.baseData.writer.read({ id: await baseIdOf(b), uuid: b.seeded.base.uuid });
  const keys = Object.fromEntries(meta.tables.find((t) => t._id === created._id)!.columns.map((col) => [col.name, col.key]));
  const baseId = await baseIdOf(b);
  const started = Date.now();
  const cells = (n: number) => Object.fromEntries(Object.entries(row(n, rows)).map(([name, value]) => [keys[name]!, value]));
  await generateRows(b.container.db, b.container.dialect, { baseId, tableId: created._id, from: Math.min(1000, rows), to: rows }, cells, (done) => {
    if (done % 1_000_000 === 0) console.log(`  ${table}: ${done + 1000} rows, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  });
  return created._id;
}

/**
 * BENCH_REUSE: the earliest base of the database holding a `Small` table of at least 1,000 rows and a `Big`
 * one of at least `rows` (an earlier run's), made the base `call` reads: its creator signed in with the seed's
 * password, a Base-Token from that account. Its registries (row indexes, group sets) are loaded as a server
 * start loads them.
 */
async function reuseEarlier(b: RunningBasegate, rows: number): Promise<{ small: string; big: string }> {
  const db = b.container.db;
  await b.container.baseData.warm();
  for (const base of await db.selectFrom('bases').innerJoin('users', 'users.id', 'bases.creator_id').select(['bases.id', 'bases.uuid', 'bases.name', 'bases.workspace_id', 'users.email']).orderBy('bases.id').execute()) {
    const meta = await b.container.baseData.writer.read({ id: Number(base.id), uuid: base.uuid });
    const small = meta.tables.find((t) => t.name === 'Small');
    const big = meta.tables.find((t) => t.name === 'Big');
    if (!small || !big) continue;
    const count = async (tableId: string) =>
      Number((await db.selectFrom('base_rows').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', Number(base.id)).where('table_id', '=', tableId).executeTakeFirstOrThrow()).n);
    // The insert case adds a few rows to each table per run.
    if ((await count(small._id)) < SMALL || (await count(big._id)) < rows) continue;
    const login = await b.app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: base.email, password: 'password-123' } });
    if (login.statusCode !== 200) throw new Error(`sign-in of ${base.email}: ${login.body}`);
    const access = await b.app.inject({
      method: 'GET',
      url: `/api/v2.1/workspace/${base.workspace_id}/dtable/${encodeURIComponent(base.name)}/access-token/`,
      headers: { authorization: `Token ${login.json<{ token: string }>().token}` },
    });
    if (access.statusCode !== 200) throw new Error(`Base-Token: ${access.body}`);
    b.seeded = { ...b.seeded, base: { uuid: base.uuid, workspace_id: Number(base.workspace_id), name: base.name }, baseToken: access.json<{ access_token: string }>().access_token };
    return { small: small._id, big: big._id };
  }
  throw new Error(`BENCH_REUSE: no base with a Small table of ${SMALL} rows or more and a Big one of ${rows} or more`);
}

async function baseIdOf(b: RunningBasegate): Promise<number> {
  return Number((await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
}

const ms = (ns: bigint) => Number(ns) / 1e6;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function measure(c: Ctx, kase: Case): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  try {
    await kase.run(c, 999); // warm the statement and metadata paths, not the page (evicted below)
    for (let i = 0; i < REQUESTS; i++) {
      c.b.container.baseData.snapshots.evict(c.baseId);
      const start = process.hrtime.bigint();
      await kase.run(c, i);
      times.push(ms(process.hrtime.bigint() - start));
    }
  } catch (error) {
    // A refused request (e.g. the SQL time limit at 10,000,000 rows) is reported, not a reason to stop.
    console.log(`${kase.name} on ${c.rows} rows: ${(error as Error).message.slice(0, 200)}`);
    return { p50: NaN, p99: NaN };
  }
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** `kase` on the small and the big table in turn, request by request (each warmed once first), the page cache evicted before each. */
async function measurePair(small: Ctx, big: Ctx, kase: Case): Promise<{ small: { p50: number; p99: number }; big: { p50: number; p99: number } }> {
  const times = { small: [] as number[], big: [] as number[] };
  try {
    for (const c of [small, big]) await kase.run(c, 999);
    for (let i = 0; i < REQUESTS; i++) {
      for (const [which, c] of [['small', small], ['big', big]] as const) {
        c.b.container.baseData.snapshots.evict(c.baseId);
        const start = process.hrtime.bigint();
        await kase.run(c, i);
        times[which].push(ms(process.hrtime.bigint() - start));
      }
    }
  } catch (error) {
    console.log(`${kase.name}: ${(error as Error).message.slice(0, 200)}`);
    return { small: { p50: NaN, p99: NaN }, big: { p50: NaN, p99: NaN } };
  }
  const q = (xs: number[]) => ({ p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) });
  return { small: q(times.small), big: q(times.big) };
}

async function main() {
  // V8's old generation bounded as `basegate serve` bounds it (HEAP_GROWING_PERCENT, default 50), so this
  // process's resident memory is the server's as `npm start` runs it, plus the bench (run it with MALLOC_ARENA_MAX=2 as npm start does).
  setHeapGrowth(Number(process.env.HEAP_GROWING_PERCENT ?? 50));
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  // BENCH_THREAD_READS=0: every listing read on the event loop, as before rows/thread-reads.ts (SQLite; an A/B knob).
  if (process.env.BENCH_THREAD_READS === '0') b.container.baseData.rows.threadReads = undefined;
  // BENCH_SEARCH_READS=0: no trigram index read (none built), as before rows/search-index.ts (an A/B knob).
  if (process.env.BENCH_SEARCH_READS === '0') b.container.baseData.indexes.options.searchReads = false;
  let peakRss = process.memoryUsage().rss;
  let casePeakRss = peakRss; // reset before each measured case
  const sampler = setInterval(() => {
    const rss = process.memoryUsage().rss;
    peakRss = Math.max(peakRss, rss);
    casePeakRss = Math.max(casePeakRss, rss);
  }, 100);
  try {
    const baseId = await baseIdOf(b);
    const indexes = b.container.baseData.indexes;
    indexes.options.minRows = Number.MAX_SAFE_INTEGER; // no index: the path before issue 34
    const seedStart = Date.now();
    const reused = REUSE ? await reuseEarlier(b, BIG) : undefined;
    const small: Ctx = { b, baseId: reused ? await baseIdOf(b) : baseId, table: 'Small', rows: SMALL, tableId: reused?.small ?? (await seed(b, 'Small', SMALL)) };
    const big: Ctx = { b, baseId: small.baseId, table: 'Big', rows: BIG, tableId: reused?.big ?? (await seed(b, 'Big', BIG)) };
    console.log(`${b.container.dialect}: ${reused ? 'reused' : 'seeded'} ${SMALL} + ${BIG} rows in ${((Date.now() - seedStart) / 1000).toFixed(1)} s; ${REQUESTS} requests per case and mode, page cache evicted before each; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    // The seeding (this bench's own generator, in this process) apart from the requests: the aim is about the server's reads and writes.
    const seedPeakRss = peakRss;
    peakRss = process.memoryUsage().rss;
    console.log(`peak resident memory while seeding: ${(seedPeakRss / 1048576).toFixed(0)} MB; now ${(peakRss / 1048576).toFixed(0)} MB`);

    const cases = CASES.filter((k) => !ONLY || ONLY.split('|').some((o) => k.name.includes(o)));
    const results: Array<{ name: string; small: { p50: number; p99: number }; before: { p50: number; p99: number }; after: { p50: number; p99: number }; rssMb?: number }> = [];
    const none = { p50: NaN, p99: NaN };
    if (!SKIP_UNINDEXED) for (const kase of cases) results.push({ name: kase.name, small: await measure(small, kase), before: await measure(big, kase), after: none });

    // The indexes the requests cause (tables of at least 20,000 rows), built in the background.
    indexes.options.minRows = 20_000;
    indexes.options.recountMs = 0;
    const buildStart = Date.now();
    for (const kase of cases) await kase.run(big, 0).catch(() => undefined);
    await indexes.idle();
    console.log(`built ${indexes.count()} row indexes in ${((Date.now() - buildStart) / 1000).toFixed(1)} s: ${(await indexes.indexesOf(big.baseId, big.tableId)).map((e) => `${e.column_key}:${e.kind}`).join(', ')}; peak RSS so far ${(peakRss / 1048576).toFixed(0)} MB`);
    if (SKIP_UNINDEXED) {
      // The two tables request by request in turn: a load that drifts falls on both alike.
      for (const kase of cases) {
        casePeakRss = process.memoryUsage().rss;
        const pair = await measurePair(small, big, kase);
        results.push({ name: kase.name, small: pair.small, before: none, after: pair.big, rssMb: Math.max(casePeakRss, process.memoryUsage().rss) / 1048576 });
      }
    } else for (const [i, kase] of cases.entries()) results[i]!.after = await measure(big, kase);

    const pad = (s: string, n: number) => s.padEnd(n);
    const f = (x: number) => x.toFixed(1).padStart(8);
    console.log(`\n${pad('case', 32)} ${'1k p50'.padStart(8)} ${'1k p99'.padStart(8)} | ${'big p50'.padStart(8)} ${'big p99'.padStart(8)} (no index) | ${'big p50'.padStart(8)} ${'big p99'.padStart(8)} (indexed) | indexed/1k p50 | peak RSS (MB, this process)`);
    for (const r of results) {
      console.log(`${pad(r.name, 32)} ${f(r.small.p50)} ${f(r.small.p99)} | ${f(r.before.p50)} ${f(r.before.p99)}            | ${f(r.after.p50)} ${f(r.after.p99)}           | ${`${(r.after.p50 / r.small.p50).toFixed(2)}×`.padEnd(14)} | ${r.rssMb === undefined ? '-' : r.rssMb.toFixed(0)}`);
    }
    if (!ONLY || ONLY.split('|').some((o) => WALK.includes(o) || o.startsWith('filtered'))) await walkFirst(big);
    if (!ONLY || ONLY.split('|').some((o) => BACKWARD.includes(o))) await backwardSort(small, big);
    console.log(`\npeak resident memory of this process (server and bench) after the seeding: ${(peakRss / 1048576).toFixed(0)} MB; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    clearInterval(sampler);
    await b.close();
  }
}

await main();
