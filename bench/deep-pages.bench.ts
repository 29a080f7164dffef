/**
 * Deep pages (issue 34 item 2): what a page deep in a big table's sorted or filtered listing costs, as a
 * ratio of the same listing's first page, measured in the same run with interleaved rounds. The page cache
 * is evicted before every request, so each is built from the rows (and the row indexes the listings cause,
 * built before the rounds). Per listing and round, at a depth of about 90% of the listing:
 * - `first`: the first page (`start=0`);
 * - `start, next`: `start=D` right after the page before it was served (its end is known: keyset);
 * - `cursor`: `cursor=` from the page before (keyset, whatever was known);
 * - `start, cold`: `start=D` with nothing known (the positions forgotten): an offset from the nearest end.
 *
 *   npx tsx bench/deep-pages.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/deep-pages.bench.ts
 *
 * Listings filtered on several columns (AND, OR, 2–3 columns) or sorted on several (views of 2–3 sorts) are
 * measured beside the same listing with their jump structure unused (`no jump idx`).
 *
 * Knobs: BENCH_ROWS (100000), BENCH_ROUNDS (7), BENCH_LIMIT (100 rows a page), BENCH_ONLY (a regular
 * expression: only the listings whose name matches, e.g. `several|sorts|filters`).
 */
import { loadavg } from 'node:os';
import { startBasegate, type RunningBasegate } from './lib/servers.js';
import { generateRows } from './lib/big-table-data.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 100);
const KINDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

type Page = { rows: unknown[]; next_cursor?: string };
interface Listing {
  name: string;
  /** Rows the listing holds. */
  size: number;
  path: string;
  body?: object;
  /** false: the same listing with jump indexes (SQLite) and jump sets (PostgreSQL) unused (A/B). */
  jumps?: false;
  /** false: jump sets read without their keyed index (PostgreSQL; `jumpKeyReads` off, A/B). */
  keys?: false;
}

async function call(b: RunningBasegate, listing: Listing, extra: string): Promise<Page> {
  b.container.baseData.indexes.options.jumpReads = listing.jumps !== false;
  b.container.baseData.indexes.options.jumpKeyReads = listing.keys !== false;
  const res = await b.app.inject({
    method: listing.body ? 'POST' : 'GET',
    url: `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/${listing.path}&limit=${LIMIT}&${extra}`,
    headers: { authorization: `Token ${b.seeded.baseToken}` },
    ...(listing.body ? { payload: listing.body } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`${listing.name} ${extra}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json<Page>();
}

async function main() {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  const data = b.container.baseData;
  try {
    const baseId = Number((await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
    const created = await b.app.inject({
      method: 'POST',
      url: `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/tables/`,
      headers: { authorization: `Token ${b.seeded.baseToken}` },
      payload: {
        table_name: 'Big',
        columns: [
          { column_name: 'Title', column_type: 'text' },
          { column_name: 'Amount', column_type: 'number' },
          { column_name: 'Kind', column_type: 'single-select', column_data: { options: KINDS.map((name, i) => ({ name, id: `k00${i}`, color: '#FFFFFF' })) } },
        ],
      },
    });
    const table = created.json<{ _id: string; columns: Array<{ key: string; name: string }> }>();
    const key = Object.fromEntries(table.columns.map((c) => [c.name, c.key]));
    const seedStart = Date.now();
    // Amount: 4 rows share each value (ties broken by id); Kind: a fifth of the rows each.
    await generateRows(b.container.db, b.container.dialect, { baseId, tableId: table._id, from: 0, to: ROWS }, (n) => ({
      [key.Title!]: `row ${n}`,
      [key.Amount!]: (n * 7_919) % Math.ceil(ROWS / 4),
      [key.Kind!]: KINDS[n % KINDS.length],
    }));
    console.log(`${b.container.dialect}: ${ROWS} rows seeded in ${((Date.now() - seedStart) / 1000).toFixed(1)} s; ${ROUNDS} rounds, ${LIMIT} rows a page`);

    const alpha = { filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'alpha' }] };
    // Listings on several columns: views (their sorts) and filtered-rows/ bodies; sizes counted from the generator's values.
    const quarter = Math.ceil(ROWS / 4);
    const amount = (n: number) => (n * 7_919) % quarter;
    const count = (match: (n: number) => boolean) => {
      let c = 0;
      for (let n = 0; n < ROWS; n++) if (match(n)) c++;
      return c;
    };
    const views: Record<string, object> = {
      'Two sorts': { sorts: [{ column_key: 'Kind', sort_type: 'down' }, { column_key: 'Amount', sort_type: 'up' }] },
      'Three sorts': { sorts: [{ column_key: 'Kind', sort_type: 'up' }, { column_key: 'Amount', sort_type: 'down' }, { column_key: 'Title', sort_type: 'up' }] },
      'Three filters': {
        filters: [
          { column_name: 'Kind', filter_predicate: 'is_not', filter_term: 'gamma' },
          { column_name: 'Amount', filter_predicate: 'greater_or_equal', filter_term: Math.floor(quarter / 10) },
          { column_name: 'Title', filter_predicate: 'contains', filter_term: '7' },
        ],
        sorts: [{ column_key: 'Kind', sort_type: 'up' }, { column_key: 'Amount', sort_type: 'down' }],
      },
    };
    for (const [name, body] of Object.entries(views)) {
      const headers = { authorization: `Token ${b.seeded.baseToken}` };
      const url = `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/views/`;
      await b.app.inject({ method: 'POST', url: `${url}?table_name=Big`, headers, payload: { name } });
      const res = await b.app.inject({ method: 'PUT', url: `${url}${encodeURIComponent(name)}/?table_name=Big`, headers, payload: body });
      if (res.statusCode !== 200) throw new Error(`view ${name}: ${res.body}`);
    }
    const twoAnd = { filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'alpha' }, { column_name: 'Amount', filter_predicate: 'less', filter_term: Math.floor(quarter / 2) }] };
    const twoOr = {
      filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'beta' }, { column_name: 'Amount', filter_predicate: 'less', filter_term: Math.floor(quarter / 10) }],
      filter_conjunction: 'Or',
    };
    const many: Listing[] = [
      { name: '2 filters AND, unsorted', size: count((n) => n % 5 === 0 && amount(n) < Math.floor(quarter / 2)), path: 'filtered-rows/?table_name=Big', body: twoAnd },
      { name: '2 filters OR, sorted desc', size: count((n) => n % 5 === 1 || amount(n) < Math.floor(quarter / 10)), path: 'filtered-rows/?table_name=Big&order_by=Amount&direction=desc', body: twoOr },
      {
        name: '3 filters, 2 sorts (view)',
        size: count((n) => n % 5 !== 2 && amount(n) >= Math.floor(quarter / 10) && String(n).includes('7')),
        path: 'rows/?table_name=Big&view_name=Three%20filters',
      },
      { name: '2 sorts (view)', size: ROWS, path: 'rows/?table_name=Big&view_name=Two%20sorts' },
      { name: '3 sorts (view)', size: ROWS, path: 'rows/?table_name=Big&view_name=Three%20sorts' },
    ];
    const all: Listing[] = [
      ...many.flatMap((l) => [l, { ...l, name: `${l.name.replace(/ \(view\)$/, '')}, no jump idx`, jumps: false as const }]),
      { name: 'sorted (Amount)', size: ROWS, path: 'rows/?table_name=Big&order_by=Amount' },
      { name: 'sorted (Amount), A/A', size: ROWS, path: 'rows/?table_name=Big&order_by=Amount' },
      { name: 'sorted, no jump set', size: ROWS, path: 'rows/?table_name=Big&order_by=Amount', jumps: false },
      { name: 'filtered 20%, sorted desc', size: ROWS / 5, path: 'filtered-rows/?table_name=Big&order_by=Amount&direction=desc', body: alpha },
      { name: 'filtered 20%, unsorted', size: ROWS / 5, path: 'filtered-rows/?table_name=Big', body: alpha },
      { name: 'filt. sorted, no key range', size: ROWS / 5, path: 'filtered-rows/?table_name=Big&order_by=Amount&direction=desc', body: alpha, keys: false },
      { name: 'filt. unsorted, no key range', size: ROWS / 5, path: 'filtered-rows/?table_name=Big', body: alpha, keys: false },
      { name: 'filt. sorted, no jump idx', size: ROWS / 5, path: 'filtered-rows/?table_name=Big&order_by=Amount&direction=desc', body: alpha, jumps: false },
      { name: 'filt. unsorted, no jump idx', size: ROWS / 5, path: 'filtered-rows/?table_name=Big', body: alpha, jumps: false },
      { name: 'unsorted', size: ROWS, path: 'rows/?table_name=Big' },
    ];
    const listings = all.filter((l) => !process.env.BENCH_ONLY || new RegExp(process.env.BENCH_ONLY).test(l.name));
    // The row indexes these listings cause (as in production: a big table filtered or sorted on a column).
    data.indexes.options.recountMs = 0;
    for (const l of listings) await call(b, l, 'start=0');
    // …and the jump indexes (SQLite) or jump sets (PostgreSQL) a cold deep jump causes.
    for (const l of listings) await call(b, l, `start=${Math.floor((l.size * 0.5) / LIMIT) * LIMIT}`);
    await data.indexes.idle();
    console.log(`row indexes: ${(await data.indexes.indexesOf(baseId, table._id)).map((e) => `${e.column_key}:${e.kind}`).join(', ')}`);

    const modes = ['first', 'start, next', 'cursor', 'start, cold'] as const;
    const times = new Map<string, number[]>(listings.flatMap((l) => modes.map((m) => [`${l.name}|${m}`, [] as number[]])));
    const timed = async (l: Listing, mode: string, extra: string) => {
      data.snapshots.evict(baseId);
      const t0 = process.hrtime.bigint();
      const page = await call(b, l, extra);
      times.get(`${l.name}|${mode}`)!.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (page.rows.length !== LIMIT) throw new Error(`${l.name} ${mode}: ${page.rows.length} rows`);
      return page;
    };
    const loads: number[] = [];
    for (let round = -1; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!);
      for (const l of listings) {
        // A different depth each round, about 90% into the listing.
        const depth = Math.floor((l.size * 0.9) / LIMIT) * LIMIT - (round + 1) * LIMIT;
        data.rows.positions.clear();
        await timed(l, 'first', 'start=0');
        data.snapshots.evict(baseId);
        const before = await call(b, l, `start=${depth - LIMIT}`); // learns where the page before ends
        // Both read after the page before; which goes first alternates (the cold read before them leaves garbage to collect).
        const next = () => timed(l, 'start, next', `start=${depth}`);
        const cursor = () => timed(l, 'cursor', `cursor=${encodeURIComponent(before.next_cursor!)}`);
        if (round % 2 === 0) await next().then(cursor);
        else await cursor().then(next);
        data.rows.positions.clear();
        await timed(l, 'start, cold', `start=${depth}`);
      }
      if (round === -1) for (const list of times.values()) list.length = 0; // warm-up round
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`\n${'listing'.padEnd(28)} ${modes.map((m) => `${m} ms`.padStart(16)).join('')}   ratios to first (p50)`);
    for (const l of listings) {
      const p50 = modes.map((m) => median(times.get(`${l.name}|${m}`)!));
      const ratios = modes.slice(1).map((m, i) => `${m}: ${(p50[i + 1]! / p50[0]!).toFixed(2)}×`);
      console.log(`${l.name.padEnd(28)} ${p50.map((x) => x.toFixed(2).padStart(16)).join('')}   ${ratios.join(', ')}`);
    }
    console.log(`\nload average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}; positions kept ${data.rows.positions.stats.bytes} bytes`);
  } finally {
    await b.close();
  }
}

await main();
