/**
 * What one tenant's slow listing costs everyone else (SQLite; rows/thread-reads.ts). A search for a term
 * only the last rows of a `BENCH_ROWS`-row table hold (default 500,000) reads the whole table; while such
 * searches run one after another, small reads of a 1,000-row table are sent every 5 ms, and the event
 * loop's delay is sampled. Two modes, interleaved over `BENCH_ROUNDS` rounds (default 2) in one process:
 * - **here**: every listing read on the event loop (the way before: thread reads unset);
 * - **thread**: reads that may scan a big table on the reader threads (the default).
 *
 *   npx tsx bench/listing-stall.bench.ts
 *
 * Prints per mode the searches' median time, the small reads' p50/p99/max and the event loop's p99/max
 * delay, then the small reads' p99 and the loop's max delay here ÷ thread; then what thread reads cost a
 * short page, and the rare-term statement with and without its look at the row's text first. Knobs: BENCH_ROWS,
 * BENCH_SEARCHES (searches per round and mode, 6), BENCH_ROUNDS.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CompiledQuery } from 'kysely';
import { gatewayCall, startBasegate, type RunningBasegate } from './lib/servers.js';
import { BIG_TABLE_COLUMNS, bigTableRow, generateRows } from './lib/big-table-data.js';
import type { ThreadReadOptions } from '../src/modules/rows/index.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 500_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SMALL_EVERY_MS = 5;

const call = gatewayCall;

async function baseId(b: RunningBasegate): Promise<number> {
  const row = await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow();
  return Number(row.id);
}

async function seed(b: RunningBasegate, table: string, rows: number): Promise<void> {
  const created = (await call(b, 'POST', 'tables/', { table_name: table, columns: BIG_TABLE_COLUMNS })) as { _id: string };
  const first = Math.min(1000, rows);
  await call(b, 'POST', 'rows/', { table_name: table, rows: Array.from({ length: first }, (_, n) => bigTableRow(n, rows)) });
  if (rows <= first) return;
  const id = await baseId(b);
  const meta = await b.container.baseData.writer.read({ id, uuid: b.seeded.base.uuid });
  const keys = Object.fromEntries(meta.tables.find((t) => t._id === created._id)!.columns.map((c) => [c.name, c.key]));
  const cells = (n: number) => Object.fromEntries(Object.entries(bigTableRow(n, rows)).map(([name, value]) => [keys[name]!, value]));
  await generateRows(b.container.db, b.container.dialect, { baseId: id, tableId: created._id, from: first, to: rows }, cells);
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN;

interface Result {
  search: number[];
  small: number[];
  loopP99: number[];
  loopMax: number[];
}

/** The server's thread reads, as the container set them up (a mode "here" unsets them). */
let threadReads: ThreadReadOptions | undefined;

async function round(b: RunningBasegate, mode: 'here' | 'thread', into: Result, offset: number): Promise<void> {
  const rows = b.container.baseData.rows;
  const id = await baseId(b);
  rows.threadReads = mode === 'here' ? undefined : threadReads;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let searching = true;
  const small = (async () => {
    for (let i = 0; searching; i++) {
      const started = performance.now();
      await call(b, 'POST', 'filtered-rows/?table_name=Small&limit=100', { filters: [{ column_name: 'Amount', filter_predicate: 'greater', filter_term: (offset + i) % 900 }] });
      into.small.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, SMALL_EVERY_MS));
    }
  })();
  for (let i = 0; i < SEARCHES; i++) {
    b.container.baseData.snapshots.evict(id); // no page from the cache
    const started = performance.now();
    // A term only one of the last rows holds: the whole table is read for it.
    await call(b, 'POST', 'filtered-rows/?table_name=Big&limit=100', { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: `row ${ROWS - 1 - ((offset + i) % 50)}` }] });
    into.search.push(performance.now() - started);
  }
  searching = false;
  await small;
  loop.disable();
  into.loopP99.push(loop.percentile(99) / 1e6);
  into.loopMax.push(loop.max / 1e6);
}

/**
 * What thread reads cost a read that is short anyway: a filter a fifth of the rows match fills its page
 * within the first 500 rows, which the next ids read on the event loop first (RowsService `nearFirst`) hold,
 * so no hop is made. Interleaved request by request, page cache evicted before each.
 */
async function hopCost(b: RunningBasegate): Promise<void> {
  const rows = b.container.baseData.rows;
  const id = await baseId(b);
  const times = { here: [] as number[], thread: [] as number[] };
  for (let i = 0; i < 400; i++) {
    const mode = i % 2 === 0 ? 'here' : 'thread';
    rows.threadReads = mode === 'here' ? undefined : threadReads;
    b.container.baseData.snapshots.evict(id);
    const started = performance.now();
    await call(b, 'POST', 'filtered-rows/?table_name=Big&limit=100', { filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: i % 3 === 0 ? 'alpha' : 'beta' }] });
    if (i >= 40) times[mode].push(performance.now() - started);
  }
  const here = quantile(times.here, 0.5);
  const thread = quantile(times.thread, 0.5);
  console.log(`\na short filtered page (a fifth of the rows match), 180 requests per mode: p50 here ${here.toFixed(2)} ms, with thread reads ${thread.toFixed(2)} ms (${(thread / here).toFixed(2)}×)`);
}

/**
 * The rare-term search's statement as the filter engine writes it (filters/to-sql.ts: the term looked for in
 * the row's whole text first) beside the same statement with only the exact cell test, interleaved, 5 each.
 */
async function rawTextFirst(b: RunningBasegate): Promise<void> {
  const id = await baseId(b);
  const meta = await b.container.baseData.writer.read({ id, uuid: b.seeded.base.uuid });
  const table = meta.tables.find((t) => t.name === 'Big')!;
  const key = table.columns.find((c) => c.name === 'Title')!.key;
  const exact = `json_type(data, '$."${key}"') = 'text' and instr(lower(json_extract(data, '$."${key}"')), ?) > 0`;
  const statement = (where: string) => `select id from base_rows where base_id = ? and table_id = ? and ${where} order by id limit 101`;
  const times = { exact: [] as number[], first: [] as number[] };
  for (let i = 0; i < 10; i++) {
    const term = `row ${ROWS - 1 - (i % 50)}`;
    const first = i % 2 === 1;
    const text = first ? statement(`instr(lower(data), ?) > 0 and ${exact}`) : statement(exact);
    const parameters = first ? [id, table._id, term, term] : [id, table._id, term];
    const started = performance.now();
    await b.container.db.executeQuery(CompiledQuery.raw(text, parameters));
    times[first ? 'first' : 'exact'].push(performance.now() - started);
  }
  const exactP50 = quantile(times.exact, 0.5);
  const firstP50 = quantile(times.first, 0.5);
  console.log(`the rare-term search's statement alone, p50: the cell's exact test ${exactP50.toFixed(0)} ms, the row's text first ${firstP50.toFixed(0)} ms (${(exactP50 / firstP50).toFixed(2)}× faster)`);
}

async function main(): Promise<void> {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  try {
    if (b.container.dialect !== 'sqlite') throw new Error('a SQLite bench: PostgreSQL reads in its own processes');
    threadReads = b.container.baseData.rows.threadReads;
    console.log(`seeding ${ROWS.toLocaleString('en')} rows …`);
    await seed(b, 'Big', ROWS);
    await seed(b, 'Small', 1000);
    const results = { here: { search: [], small: [], loopP99: [], loopMax: [] } as Result, thread: { search: [], small: [], loopP99: [], loopMax: [] } as Result };
    // Warm: both modes once (threads started, statements prepared, pages in the OS cache).
    await round(b, 'thread', { search: [], small: [], loopP99: [], loopMax: [] }, 0);
    await round(b, 'here', { search: [], small: [], loopP99: [], loopMax: [] }, 0);
    let offset = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? (['here', 'thread'] as const) : (['thread', 'here'] as const)) await round(b, mode, results[mode], (offset += SEARCHES));
    }
    console.log(`\n${ROWS.toLocaleString('en')} rows, ${ROUNDS} rounds × ${SEARCHES} searches per mode; small reads every ${SMALL_EVERY_MS} ms beside them (ms)`);
    for (const mode of ['here', 'thread'] as const) {
      const r = results[mode];
      console.log(
        `  ${mode.padEnd(6)} search p50 ${quantile(r.search, 0.5).toFixed(0).padStart(6)} | small reads (${String(r.small.length).padStart(4)}) p50 ${quantile(r.small, 0.5).toFixed(1).padStart(6)} p99 ${quantile(r.small, 0.99).toFixed(1).padStart(7)} max ${Math.max(...r.small).toFixed(1).padStart(7)} | event loop delay p99 ${Math.max(...r.loopP99).toFixed(1).padStart(7)} max ${Math.max(...r.loopMax).toFixed(1).padStart(7)}`,
      );
    }
    const ratio = (a: number, c: number) => `${(a / c).toFixed(1)}×`;
    console.log(
      `  here ÷ thread: small reads p99 ${ratio(quantile(results.here.small, 0.99), quantile(results.thread.small, 0.99))}, event loop max delay ${ratio(Math.max(...results.here.loopMax), Math.max(...results.thread.loopMax))}, search p50 ${ratio(quantile(results.here.search, 0.5), quantile(results.thread.search, 0.5))}`,
    );
    console.log(`  listing statements run on a reader thread: ${b.container.baseData.rows.threadReadCount}`);
    await hopCost(b);
    await rawTextFirst(b);
  } finally {
    await b.close();
  }
}

await main();
