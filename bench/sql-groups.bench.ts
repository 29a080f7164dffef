/**
 * SQL grouped statements over one column (issue 34): answered from the column's row index
 * (sql/indexed-groups.ts) beside the same statement scanning every row's JSON, on a `BENCH_ROWS`-row table
 * (100,000), in one run with the indexes built: rounds interleave the two ways statement by statement
 * (`RowIndexes.options.groupReads` off = the scan), alternating which goes first.
 *
 *   npx tsx bench/sql-groups.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/sql-groups.bench.ts
 *
 * Prints per statement the median and p90 ms of each way and the scan/index ratio of the medians, with
 * the range of per-round ratios. PostgreSQL has no index-only read of the indexed expression, so there both
 * ways are the scan (ratio ~1). Knobs: BENCH_ROWS (100000), BENCH_ROUNDS (7).
 */
import { loadavg } from 'node:os';
import { startBasegate, type RunningBasegate, gatewayCall } from './lib/servers.js';
import { BIG_TABLE_COLUMNS, bigTableRow, generateRows } from './lib/big-table-data.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const STATEMENTS = [
  'SELECT Kind, COUNT(*) FROM Big GROUP BY Kind',
  'SELECT COUNT(*), MIN(Amount), MAX(Amount), SUM(Amount) FROM Big',
  'SELECT Amount, COUNT(*) FROM Big GROUP BY Amount ORDER BY COUNT(*) DESC, Amount LIMIT 10',
  'SELECT Due, COUNT(*) FROM Big GROUP BY Due ORDER BY Due DESC LIMIT 20',
  'SELECT COUNT(DISTINCT Title) FROM Big',
  `SELECT Kind, COUNT(*) FROM Big WHERE Kind <> 'alpha' GROUP BY Kind`,
];

const call = gatewayCall;

/** Titles repeat (each twice), so a text GROUP BY has groups. */
const row = (n: number) => bigTableRow(n, ROWS, `row ${n % (ROWS / 2)}`);

async function seed(b: RunningBasegate, baseId: number): Promise<string> {
  const created = (await call(b, 'POST', 'tables/', {
    table_name: 'Big',
    columns: BIG_TABLE_COLUMNS,
  })) as { _id: string };
  await call(b, 'POST', 'rows/', { table_name: 'Big', rows: Array.from({ length: 1000 }, (_, j) => row(j)) });
  const meta = await b.container.baseData.writer.read({ id: baseId, uuid: b.seeded.base.uuid });
  const keys = Object.fromEntries(meta.tables.find((t) => t._id === created._id)!.columns.map((col) => [col.name, col.key]));
  const cells = (n: number) => Object.fromEntries(Object.entries(row(n)).map(([name, value]) => [keys[name]!, value]));
  await generateRows(b.container.db, b.container.dialect, { baseId, tableId: created._id, from: 1000, to: ROWS }, cells);
  return created._id;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.9 * xs.length))]!;

async function main() {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  try {
    const baseId = Number((await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
    const indexes = b.container.baseData.indexes;
    // Group sets would answer these statements on both ways (bench/sql-group-sets.bench.ts measures them).
    b.container.baseData.groupSets.options.enabled = false;
    const started = Date.now();
    const tableId = await seed(b, baseId);
    // The statements note their column; the indexes are built in the background (awaited here).
    indexes.options.recountMs = 0;
    const sqlOf = (statement: string) => call(b, 'POST', 'sql/', { sql: statement, convert_keys: true });
    for (const statement of STATEMENTS) await sqlOf(statement);
    await indexes.idle();
    const built = (await indexes.indexesOf(baseId, tableId)).map((e) => `${e.column_key}:${e.kind}`).join(', ');
    console.log(`${b.container.dialect}: ${ROWS} rows seeded and indexed (${built}) in ${((Date.now() - started) / 1000).toFixed(1)} s; ${ROUNDS} rounds; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

    const times = STATEMENTS.map(() => ({ scan: [] as number[], index: [] as number[] }));
    const answers = STATEMENTS.map(() => ({ scan: '', index: '' }));
    const timed = async (i: number, way: 'scan' | 'index') => {
      indexes.options.groupReads = way === 'index';
      const start = process.hrtime.bigint();
      const answer = JSON.stringify(await sqlOf(STATEMENTS[i]!));
      times[i]![way].push(Number(process.hrtime.bigint() - start) / 1e6);
      if (answers[i]![way] === '') answers[i]![way] = answer;
    };
    for (let i = 0; i < STATEMENTS.length; i++) {
      await timed(i, 'scan'); // warm-up, not counted
      await timed(i, 'index');
      times[i]!.scan.length = 0;
      times[i]!.index.length = 0;
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < STATEMENTS.length; i++) {
        const order: Array<'scan' | 'index'> = round % 2 ? ['index', 'scan'] : ['scan', 'index'];
        for (const way of order) await timed(i, way);
      }
    }
    console.log(`\n${'statement'.padEnd(88)} ${'scan p50'.padStart(9)} ${'p90'.padStart(7)} | ${'index p50'.padStart(9)} ${'p90'.padStart(7)} | scan/index (per-round range)  same answer`);
    for (const [i, statement] of STATEMENTS.entries()) {
      const { scan, index } = times[i]!;
      const perRound = scan.map((s, r) => s / index[r]!);
      const f = (x: number) => x.toFixed(1).padStart(7);
      console.log(
        `${statement.padEnd(88)} ${f(median(scan)).padStart(9)} ${f(p90(scan))} | ${f(median(index)).padStart(9)} ${f(p90(index))} | ${(median(scan) / median(index)).toFixed(1).padStart(5)}× (${Math.min(...perRound).toFixed(1)}–${Math.max(...perRound).toFixed(1)})`.padEnd(150) +
          `  ${answers[i]!.scan === answers[i]!.index ? 'yes' : 'NO'}`,
      );
    }
    console.log(`\nload at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await b.close();
  }
}

await main();
