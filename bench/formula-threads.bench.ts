/**
 * Where a formula batch runs (issue #24): the same batch computed on the main thread and on a warm
 * formula thread (FormulaThreads, one thread), rounds interleaved, medians, for batches from 100 to
 * 10,000 formula cells, wall time. The thread's time includes the hop (copying the rows there and the
 * cells back, in chunks of 200 rows); the main thread is busy only for the copies meanwhile. Below
 * THREAD_MIN_CELLS (1,000) a batch takes milliseconds on the main thread, which yields every 10 ms.
 *
 *   npx tsx bench/formula-threads.bench.ts      (BENCH_ROUNDS, default 7)
 */
import { performance } from 'node:perf_hooks';
import { FormulaThreads, evaluateBatch, type PlanRow, type PlanTable } from '../src/modules/formulas/index.js';
import { median } from './lib/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const FORMULAS = ['{X} * 2 + 1', 'concatenate({Name}, " #", {X})', 'regexextract({Name}, "(o+)")', 'if({X} > 500, "big", "small")', 'text({X}, "0.00")'];

const table: PlanTable = {
  columns: [
    { key: 'x', name: 'X', type: 'number', data: null },
    { key: 'n', name: 'Name', type: 'text', data: null },
    ...FORMULAS.map((formula, i) => ({ key: `f${i}`, name: `F${i}`, type: 'formula', data: { formula } })),
  ],
};
const rowsOf = (count: number): PlanRow[] =>
  Array.from({ length: count }, (_, i) => ({ _ctime: 0, _mtime: 0, _creator: 'a', _last_modifier: 'a', data: { x: i, n: `row ${i} foo` } }));
const ctx = { timeZone: 'UTC', now: Date.UTC(2024, 0, 31) };

// One thread, and every batch sent to it (threshold aside): the bench times the hop itself.
const threads = new FormulaThreads({ threads: 1, timeoutMs: 600_000, minThreadCells: 0 });
const onThread = (rows: PlanRow[]) => threads.compute(table, rows, ctx);

await onThread(rowsOf(1000)); // start and warm the thread
console.log(`formula batch on the main thread vs on a warm formula thread — ${FORMULAS.length} formula columns, ${ROUNDS} rounds (medians)`);
for (const rowCount of [20, 100, 200, 1000, 2000]) {
  const main: number[] = [];
  const thread: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let started = performance.now();
    evaluateBatch({ table, rows: rowsOf(rowCount), ctx });
    main.push(performance.now() - started);
    started = performance.now();
    await onThread(rowsOf(rowCount));
    thread.push(performance.now() - started);
  }
  const m = median(main);
  const t = median(thread);
  console.log(`${String(rowCount * FORMULAS.length).padStart(6)} cells   main ${m.toFixed(2).padStart(8)} ms   thread ${t.toFixed(2).padStart(8)} ms   thread/main ${(t / m).toFixed(2)}x`);
}
await threads.close();
