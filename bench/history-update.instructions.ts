/**
 * Issue 28's "under 15%" for single-row updates by instruction counts instead of time (`bench/history.bench.ts`
 * reads it in CPU time: medians 1.06–1.12, but means 1.05–1.25 between runs at the machine's load). The same
 * update as there (`PUT rows/` of one row's Name, through the gateway with `app.inject`, a 1,000-row table,
 * the rows in turn), on SQLite, where the database's work is in the process too; each arm in a child process of
 * its own under callgrind (`bench/lib/callgrind.ts`: segments, collections outside them, V8 single-threaded):
 *   - off: the log off (`OPERATION_LOG_RETENTION_DAYS=0`);
 *   - on:  the log on, as served; each segment ends with the row index's batch step, which the app runs
 *          on a timer (every 5 s) for the updates of the last tick (`indexPendingRows`): counted with them.
 * After `BENCH_WARM` uninstrumented updates (2000), `BENCH_SEGMENTS` (21) segments of N updates
 * (`BENCH_CALLS` = N, 100). The mean of the segments counts the rare costly ones (a WAL checkpoint the log's
 * pages brought forward, a young collection of the log's garbage) in proportion; the median leaves them out.
 * Each arm runs `BENCH_REPEAT` times (2): the spread of the same arm's runs (A/A) is the method's own.
 * `BENCH_UPDATE_OPS` (0: a new base) operations are seeded into each arm's base first, by SQL
 * (`bench/lib/oplog-seed.ts`, as `history.bench.ts` does; the log-off arm too: the same database size),
 * with the row index complete: a long log's deeper indexes.
 *
 *   npx tsx bench/history-update.instructions.ts
 *   BENCH_UPDATE_OPS=1000000 npx tsx bench/history-update.instructions.ts   # in a base with a million operations
 *   BENCH_KEEP=/tmp/cg npx tsx bench/history-update.instructions.ts   # keep the callgrind files for callgrind_annotate
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { countArms, countSegments, NODE_FLAGS, printViews } from './lib/callgrind.js';

const N = Number(process.env.BENCH_CALLS ?? 100);
const SEGMENT_COUNT = Number(process.env.BENCH_SEGMENTS ?? 21);
const WARM = Number(process.env.BENCH_WARM ?? 2000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const ARMS = ['off', 'on'];
const ROWS = 1000;
const UPDATE_OPS = Number(process.env.BENCH_UPDATE_OPS ?? 0);

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

/** One arm, under callgrind: set-up, warm-up, then the counted segments. */
async function child(arm: string): Promise<void> {
  const { createTestApp } = await import('../test/helpers/index.js');
  const { appendRows, gateway } = await import('../test/http/rows.fixtures.js');
  const { indexPendingRows } = await import('../src/modules/history/row-index.js');
  const { seedOperations } = await import('./lib/oplog-seed.js');
  if (!ARMS.includes(arm)) throw new Error(`unknown arm ${arm}`);
  const t = await createTestApp('sqlite', { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', ...(arm === 'off' ? { OPERATION_LOG_RETENTION_DAYS: '0' } : {}) });
  try {
    const g = await gateway(t);
    const ids = await appendRows(g, 'Table1', Array.from({ length: ROWS }, (_, i) => ({ Name: `row ${i}` })));
    if (UPDATE_OPS > 0) {
      await seedOperations(t, g.base.id, UPDATE_OPS, ROWS);
      await indexPendingRows(t.container.db);
    }
    let n = 0;
    const update = async () => {
      n += 1;
      const res = await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: ids[n % ids.length], row: { Name: `v${n}` } }] });
      if (res.statusCode !== 200) throw new Error(`update: ${res.statusCode} ${res.body}`);
    };
    const batch = async () => {
      await indexPendingRows(t.container.db);
    };
    for (let i = 0; i < WARM; i += 1) {
      await update();
      if (i % N === N - 1) await batch();
    }
    await countSegments([{ call: update, afterSegment: batch }], { segments: SEGMENT_COUNT, n: N });
  } finally {
    await t.close();
  }
}

async function parent(): Promise<void> {
  const loadAtStart = load();
  const counts = await countArms(fileURLToPath(import.meta.url), ARMS, { repeat: REPEAT, countedSegments: SEGMENT_COUNT });
  console.log(
    `sqlite, callgrind instructions of the whole node process (every thread; node ${NODE_FLAGS.join(' ')}), ${SEGMENT_COUNT} segments of N=${N} updates after ${WARM} uninstrumented, ${UPDATE_OPS} operations seeded before, ${REPEAT} run(s) per arm, Node ${process.version}, load ${loadAtStart} at start, ${load()} at end`,
  );
  printViews(counts, ['single-row update (log off = 100%)'], { segments: SEGMENT_COUNT, n: N });
}
