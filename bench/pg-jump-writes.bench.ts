/**
 * What PostgreSQL's jump sets (rows/jump-sets.ts, migration 0044) cost a single-row insert: the trigger
 * on `base_rows` probes `row_jump_defs` for every written row and keeps the sets of a table that has them.
 * Variants, interleaved round-robin (BENCH_ROUNDS), each BENCH_INSERTS one-row `POST …/rows/` one after
 * the other (one client: the write's own cost, not batching), on a table of BENCH_ROWS rows:
 *  - `no trigger`: the trigger disabled (the path before jump sets);
 *  - `trigger, no set` (twice: A/A control) — the cost every table pays;
 *  - `trigger, 1 set` / `trigger, 3 sets`: a table with one (sorted) or three (sorted, filtered+sorted,
 *    filtered) jump sets, each insert adding a side row per set;
 *  - `3 sets, no keyed idx`: the same three sets on another table with the filtered sets' keyed indexes
 *    (`…_k`) dropped: what those indexes add to a write.
 * Medians of the per-round mean wall time per insert, this process's CPU and the database backends' CPU.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/pg-jump-writes.bench.ts
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { startBasegate, type RunningBasegate } from './lib/servers.js';
import { generateRows } from './lib/big-table-data.js';
import { postgresBackendsCpu, postgresCpuSince } from './lib/postgres-cpu.js';

if (!process.env.BENCH_DATABASE_URL?.startsWith('postgres')) throw new Error('pg-jump-writes.bench needs BENCH_DATABASE_URL (PostgreSQL)');
const DATABASE = new URL(process.env.BENCH_DATABASE_URL).pathname.slice(1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const INSERTS = Number(process.env.BENCH_INSERTS ?? 300);
const ROWS = Number(process.env.BENCH_ROWS ?? 20_000);
const KINDS = ['alpha', 'beta', 'gamma'];

const tableIds = new Map<string, string>();

async function table(b: RunningBasegate, baseId: number, name: string) {
  const res = await b.app.inject({
    method: 'POST',
    url: `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/tables/`,
    headers: { authorization: `Token ${b.seeded.baseToken}` },
    payload: {
      table_name: name,
      columns: [
        { column_name: 'Title', column_type: 'text' },
        { column_name: 'Amount', column_type: 'number' },
        { column_name: 'Kind', column_type: 'single-select', column_data: { options: KINDS.map((n, i) => ({ name: n, id: `k00${i}`, color: '#FFFFFF' })) } },
      ],
    },
  });
  const t = res.json<{ _id: string; columns: Array<{ key: string; name: string }> }>();
  tableIds.set(name, t._id);
  const key = Object.fromEntries(t.columns.map((c) => [c.name, c.key]));
  await generateRows(b.container.db, b.container.dialect, { baseId, tableId: t._id, from: 0, to: ROWS }, (n) => ({ [key.Title!]: `row ${n}`, [key.Amount!]: n % 977, [key.Kind!]: KINDS[n % 3] }));
  return name;
}

async function call(b: RunningBasegate, method: 'GET' | 'POST', path: string, payload?: object) {
  const res = await b.app.inject({ method, url: `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/${path}`, headers: { authorization: `Token ${b.seeded.baseToken}` }, ...(payload ? { payload } : {}) });
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
}

async function main() {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  try {
    const db = b.container.db;
    const baseId = Number((await db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
    const plain = await table(b, baseId, 'Plain');
    const one = await table(b, baseId, 'One');
    const three = await table(b, baseId, 'Three');
    const unkeyed = await table(b, baseId, 'Unkeyed');
    const indexes = b.container.baseData.indexes;
    Object.assign(indexes.options, { recountMs: 0, positionSkip: 10 });
    const alpha = { filters: [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'alpha' }] };
    await call(b, 'GET', `rows/?table_name=${one}&order_by=Amount&start=100&limit=10`);
    await call(b, 'GET', `rows/?table_name=${three}&order_by=Amount&start=100&limit=10`);
    await call(b, 'POST', `filtered-rows/?table_name=${three}&order_by=Amount&direction=desc&start=100&limit=10`, alpha);
    await call(b, 'POST', `filtered-rows/?table_name=${three}&start=100&limit=10`, alpha);
    await call(b, 'GET', `rows/?table_name=${unkeyed}&order_by=Amount&start=100&limit=10`);
    await call(b, 'POST', `filtered-rows/?table_name=${unkeyed}&order_by=Amount&direction=desc&start=100&limit=10`, alpha);
    await call(b, 'POST', `filtered-rows/?table_name=${unkeyed}&start=100&limit=10`, alpha);
    await indexes.idle();
    // The Unkeyed table's sets without their keyed indexes.
    const dropped = await sql<{ name: string }>`select d.name from row_jump_defs d where d.base_id = ${baseId} and d.table_id = ${tableIds.get(unkeyed)!} and d.filter_key is not null`.execute(db);
    for (const { name } of dropped.rows) await sql.raw(`drop index if exists "${name}_k"`).execute(db);
    const sets = (await sql<{ name: string }>`select name from row_jump_defs where base_id = ${baseId}`.execute(db)).rows.length;
    console.log(`${ROWS} rows per table; jump sets: ${sets}; ${ROUNDS} rounds × ${INSERTS} inserts per variant`);

    const trigger = async (on: boolean) => sql.raw(`alter table base_rows ${on ? 'enable' : 'disable'} trigger base_rows_jump_keys`).execute(db);
    const variants: Array<{ name: string; table: string; trigger: boolean }> = [
      { name: 'no trigger', table: plain, trigger: false },
      { name: 'trigger, no set', table: plain, trigger: true },
      { name: 'trigger, 1 set', table: one, trigger: true },
      { name: 'trigger, 3 sets', table: three, trigger: true },
      { name: '3 sets, no keyed idx', table: unkeyed, trigger: true },
      { name: 'trigger, no set (A/A)', table: plain, trigger: true },
    ];
    const results = new Map(variants.map((v) => [v.name, { wall: [] as number[], cpu: [] as number[], db: [] as number[] }]));
    const loads: number[] = [];
    let n = 0;
    for (let round = -1; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!);
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        await trigger(v.trigger);
        const dbBefore = postgresBackendsCpu(DATABASE);
        const cpu0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < INSERTS; i++) await call(b, 'POST', 'rows/', { table_name: v.table, rows: [{ Title: `new ${n++}`, Amount: n % 977, Kind: KINDS[n % 3] }] });
        const wall = Number(process.hrtime.bigint() - t0) / 1e3 / INSERTS;
        const cpu = process.cpuUsage(cpu0);
        const dbCpu = postgresCpuSince(dbBefore, DATABASE);
        if (round < 0) continue;
        const r = results.get(v.name)!;
        r.wall.push(wall);
        r.cpu.push((cpu.user + cpu.system) / INSERTS);
        if (dbCpu !== undefined) r.db.push(dbCpu / INSERTS);
      }
    }
    await trigger(true);
    const med = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
    const spread = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}` : '');
    console.log(`\n${'variant'.padEnd(24)}${'wall µs/insert'.padStart(16)}${'(spread)'.padStart(14)}${'node CPU µs'.padStart(13)}${'db CPU µs'.padStart(12)}${'(spread)'.padStart(14)}`);
    for (const v of variants) {
      const r = results.get(v.name)!;
      console.log(`${v.name.padEnd(24)}${med(r.wall).toFixed(0).padStart(16)}${spread(r.wall).padStart(14)}${med(r.cpu).toFixed(0).padStart(13)}${med(r.db).toFixed(0).padStart(12)}${spread(r.db).padStart(14)}`);
    }
    console.log(`\nload average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  } finally {
    await b.close();
  }
}

await main();
