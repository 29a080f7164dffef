/**
 * SQL grouped statements answered from group sets (issue 34; rows/group-sets.ts, sql/group-set-plans.ts):
 * on a `BENCH_ROWS`-row table (100,000) with its sets built, beside the same statement on a 1,000-row
 * table and the same statement on the big table reading every row (sets switched off), rounds interleaved
 * in one run; then single-row inserts into the big table with its sets in place and without them
 * (their definitions moved aside, so the triggers find none), interleaved in one run.
 *
 *   npx tsx bench/sql-group-sets.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/sql-group-sets.bench.ts
 *
 * Knobs: BENCH_ROWS (100000), BENCH_ROUNDS (15), BENCH_INSERTS (200 per way). Each figure is a median
 * and p99 of single requests in ms (the SQL endpoint keeps no cache: each read is uncached).
 */
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { startBasegate, type RunningBasegate, gatewayCall } from './lib/servers.js';
import { BIG_TABLE_COLUMNS, bigTableRow, generateRows } from './lib/big-table-data.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const INSERTS = Number(process.env.BENCH_INSERTS ?? 200);
const SMALL = 1000;

const STATEMENTS = [
  'SELECT Kind, COUNT(*) FROM T GROUP BY Kind',
  'SELECT Kind, COUNT(*), SUM(Amount), AVG(Amount) FROM T GROUP BY Kind ORDER BY COUNT(*) DESC',
  `SELECT Kind, COUNT(*) FROM T WHERE Kind <> 'alpha' GROUP BY Kind`,
  'SELECT COUNT(*), SUM(Amount) FROM T WHERE Kind IS NULL',
];

const call = gatewayCall;

async function seed(b: RunningBasegate, baseId: number, name: string, rows: number): Promise<string> {
  const created = (await call(b, 'POST', 'tables/', { table_name: name, columns: BIG_TABLE_COLUMNS })) as { _id: string };
  const first = Math.min(rows, 1000);
  await call(b, 'POST', 'rows/', { table_name: name, rows: Array.from({ length: first }, (_, j) => bigTableRow(j, rows)) });
  if (rows > first) {
    const meta = await b.container.baseData.writer.read({ id: baseId, uuid: b.seeded.base.uuid });
    const keys = Object.fromEntries(meta.tables.find((t) => t._id === created._id)!.columns.map((col) => [col.name, col.key]));
    const cells = (n: number) => Object.fromEntries(Object.entries(bigTableRow(n, rows)).map(([k, value]) => [keys[k]!, value]));
    await generateRows(b.container.db, b.container.dialect, { baseId, tableId: created._id, from: first, to: rows }, cells);
  }
  return created._id;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const p99 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))]!;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

async function main() {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  try {
    const baseId = Number((await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
    const sets = b.container.baseData.groupSets;
    // The row indexes are left off so the scan is the scan (the SQLite row-index reading is bench/sql-groups.bench.ts).
    b.container.baseData.indexes.options.groupReads = false;
    let started = Date.now();
    const bigId = await seed(b, baseId, 'Big', ROWS);
    await seed(b, baseId, 'Small', SMALL);
    const seeded = (Date.now() - started) / 1000;
    const sqlOf = (statement: string, table: string) => call(b, 'POST', 'sql/', { sql: statement.replace(/\bT\b/, table), convert_keys: true });
    started = Date.now();
    for (const statement of STATEMENTS) await sqlOf(statement, 'Big');
    await sets.idle();
    const built = await sets.setsOf(baseId, bigId);
    console.log(
      `${b.container.dialect}: ${ROWS} + ${SMALL} rows seeded in ${seeded.toFixed(1)} s; ${built.length} group sets built in ${((Date.now() - started) / 1000).toFixed(1)} s; ${ROUNDS} rounds; load ${load()}`,
    );

    type Way = 'set' | 'small' | 'scan';
    const ways: Way[] = ['set', 'small', 'scan'];
    const times = STATEMENTS.map(() => ({ set: [] as number[], small: [] as number[], scan: [] as number[] }));
    const answers = STATEMENTS.map(() => ({ set: '', scan: '' }));
    const refused = STATEMENTS.map(() => 0);
    const timed = async (i: number, way: Way) => {
      sets.options.enabled = way !== 'scan';
      const start = process.hrtime.bigint();
      // The scan of a big table may pass the SQL time limit (10 s): counted as refused.
      const answer = await sqlOf(STATEMENTS[i]!, way === 'small' ? 'Small' : 'Big').then(
        (body) => JSON.stringify(body),
        (error: unknown) => {
          if (way !== 'scan' || !/SQL_TIMEOUT_MS/.test(String(error))) throw error;
          refused[i]!++;
          return '';
        },
      );
      times[i]![way].push(Number(process.hrtime.bigint() - start) / 1e6);
      if (way !== 'small' && answers[i]![way] === '') answers[i]![way] = answer;
    };
    for (let i = 0; i < STATEMENTS.length; i++) for (const way of ways) await timed(i, way); // warm-up
    for (const t of times) for (const way of ways) t[way].length = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < STATEMENTS.length; i++) {
        const order = round % 2 ? [...ways].reverse() : ways;
        for (const way of order) await timed(i, way);
      }
    }
    sets.options.enabled = true;
    const f = (x: number) => x.toFixed(2).padStart(8);
    console.log(`\n${'statement'.padEnd(96)} ${'set p50'.padStart(8)} ${'p99'.padStart(8)} | ${'1,000 p50'.padStart(9)} ${'p99'.padStart(8)} | set/1,000 | ${'scan p50'.padStart(8)} ${'p99'.padStart(8)} | scan/set  same answer`);
    for (const [i, statement] of STATEMENTS.entries()) {
      const { set, small, scan } = times[i]!;
      console.log(
        `${statement.padEnd(96)} ${f(median(set))} ${f(p99(set))} | ${f(median(small)).padStart(9)} ${f(p99(small))} | ${(median(set) / median(small)).toFixed(2).padStart(8)}× | ${f(median(scan))} ${f(p99(scan))} | ${(median(scan) / median(set)).toFixed(0).padStart(6)}×  ${answers[i]!.scan === '' ? 'scan refused' : answers[i]!.set === answers[i]!.scan ? 'yes' : 'NO'}${refused[i] ? ` (scan over the time limit ${refused[i]}×)` : ''}`,
      );
    }
    console.log(`load after the reads ${load()}`);

    // Single-row inserts into the big table, with its sets and without (definitions moved aside: the
    // triggers probe, find none, write nothing). The counts are not kept meanwhile: the bench ends after.
    const insertTimes = { with: [] as number[], without: [] as number[] };
    const setsOn = async (on: boolean) => {
      await sql`update row_group_defs set table_id = ${on ? bigId : 'off0'} where base_id = ${baseId} and table_id = ${on ? 'off0' : bigId}`.execute(b.container.db);
    };
    let n = ROWS;
    const insert = async (way: 'with' | 'without') => {
      const start = process.hrtime.bigint();
      await call(b, 'POST', 'rows/', { table_name: 'Big', rows: [bigTableRow(n++, ROWS)] });
      insertTimes[way].push(Number(process.hrtime.bigint() - start) / 1e6);
    };
    const batch = 20;
    for (let done = 0; done < INSERTS; done += batch) {
      const order: Array<'with' | 'without'> = (done / batch) % 2 ? ['without', 'with'] : ['with', 'without'];
      for (const way of order) {
        await setsOn(way === 'with');
        for (let k = 0; k < batch; k++) await insert(way);
      }
    }
    await setsOn(true);
    const w = insertTimes.with;
    const wo = insertTimes.without;
    console.log(`\nsingle-row insert into Big (${w.length} each, batches of ${batch} interleaved): with sets p50 ${f(median(w))} p99 ${f(p99(w))} ms | without p50 ${f(median(wo))} p99 ${f(p99(wo))} ms | with/without ${(median(w) / median(wo)).toFixed(2)}×`);
    console.log(`load at the end ${load()}`);
  } finally {
    await b.close();
  }
}

await main();
