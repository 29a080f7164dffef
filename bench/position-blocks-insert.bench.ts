/**
 * What counted position blocks (issue 34, migration 0049, rows/position-blocks.ts) cost a single-row insert:
 * two tables of one base, `BENCH_ROWS` rows each (25,000), one with its position index and blocks, one with
 * neither; single-row inserts through the API alternate between them in rounds (drift on a shared machine
 * hits both alike), and the ratio with / without blocks is taken per round.
 *
 *   npx tsx bench/position-blocks-insert.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/position-blocks-insert.bench.ts
 *
 * Knobs: BENCH_ROWS (25000), BENCH_ROUNDS (10), BENCH_INSERTS (100 per table and round).
 */
import { loadavg } from 'node:os';
import { gatewayCall, startBasegate, type RunningBasegate } from './lib/servers.js';
import { BIG_TABLE_COLUMNS, bigTableRow, generateRows } from './lib/big-table-data.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 25_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const INSERTS = Number(process.env.BENCH_INSERTS ?? 100);

const call = gatewayCall;

async function seed(b: RunningBasegate, baseId: number, table: string): Promise<string> {
  const created = (await call(b, 'POST', 'tables/', { table_name: table, columns: BIG_TABLE_COLUMNS })) as { _id: string };
  await call(b, 'POST', 'rows/', { table_name: table, rows: Array.from({ length: 100 }, (_, j) => bigTableRow(j, ROWS)) });
  const meta = await b.container.baseData.writer.read({ id: baseId, uuid: b.seeded.base.uuid });
  const keys = Object.fromEntries(meta.tables.find((t) => t._id === created._id)!.columns.map((c) => [c.name, c.key]));
  const cells = (n: number) => Object.fromEntries(Object.entries(bigTableRow(n, ROWS)).map(([name, value]) => [keys[name]!, value]));
  await generateRows(b.container.db, b.container.dialect, { baseId, tableId: created._id, from: 100, to: ROWS }, cells, () => undefined);
  return created._id;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const b = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  try {
    const baseId = Number((await b.container.db.selectFrom('bases').select('id').where('uuid', '=', b.seeded.base.uuid).executeTakeFirstOrThrow()).id);
    const withId = await seed(b, baseId, 'WithBlocks');
    await seed(b, baseId, 'Without');
    // A deep jump causes the position index and then the blocks (built in the background, awaited).
    const indexes = b.container.baseData.indexes;
    await call(b, 'GET', `rows/?table_name=WithBlocks&limit=10&start=${ROWS - 50}`);
    await indexes.idle();
    if (!indexes.blocks.has(baseId, withId)) throw new Error('the blocks were not built');
    // Wall time per insert, and this process's CPU time (SQLite's work is all in it; PostgreSQL's is not).
    const cpu = { WithBlocks: 0, Without: 0 } as Record<string, number>;
    const insert = async (table: string, i: number) => {
      const start = process.hrtime.bigint();
      const used = process.cpuUsage();
      await call(b, 'POST', 'rows/', { table_name: table, row: { Title: `new ${i}`, Amount: i, Kind: 'alpha', Due: '2026-05-01' } });
      const spent = process.cpuUsage(used);
      cpu[table] = cpu[table]! + (spent.user + spent.system) / 1000;
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    for (let i = 0; i < 20; i++) await insert(i % 2 ? 'WithBlocks' : 'Without', i); // warm-up
    cpu.WithBlocks = 0;
    cpu.Without = 0;
    const ratios: number[] = [];
    const all = { with: [] as number[], without: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const times = { with: [] as number[], without: [] as number[] };
      for (let i = 0; i < INSERTS; i++) {
        // Alternating within the round; which goes first alternates too.
        const first = (i + round) % 2 === 0;
        if (first) times.with.push(await insert('WithBlocks', i));
        times.without.push(await insert('Without', i));
        if (!first) times.with.push(await insert('WithBlocks', i));
      }
      ratios.push(median(times.with) / median(times.without));
      all.with.push(...times.with);
      all.without.push(...times.without);
    }
    console.log(`${b.container.dialect}: ${ROWS} rows per table, ${ROUNDS} rounds × ${INSERTS} single-row inserts per table; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`insert p50 with blocks ${median(all.with).toFixed(2)} ms, without ${median(all.without).toFixed(2)} ms; ratio with/without per round: median ${median(ratios).toFixed(3)}, range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`);
    const n = ROUNDS * INSERTS;
    console.log(`CPU time of this process per insert: with blocks ${(cpu.WithBlocks! / n).toFixed(3)} ms, without ${(cpu.Without! / n).toFixed(3)} ms (ratio ${(cpu.WithBlocks! / cpu.Without!).toFixed(3)})`);
  } finally {
    await b.close();
  }
}

await main();
