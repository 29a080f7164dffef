/**
 * Issue 33's "under 5%" by instruction counts instead of time: the same two calls as
 * `bench/security-write.bench.ts` (a token-authenticated 100-row read and a single-row insert, through
 * the gateway with `app.inject`: the whole Fastify pipeline in process, no sockets), each arm in a child
 * process of its own under `valgrind --tool=callgrind`, which counts the instructions the process executes
 * (every thread of it) whatever the machine's load. The arms are `bench/lib/security-calls.ts`'s: `off`
 * (scopes and audit off), `scoped` (every dimension), `unscoped` (informational, `BENCH_ARMS=off,scoped,unscoped`).
 * The method (segments, collections outside them, V8 single-threaded) is `bench/lib/callgrind.ts`'s:
 * after `BENCH_WARM` uninstrumented calls of each (1000), `BENCH_SEGMENTS` (11) segments of N reads, then as
 * many of N inserts (`BENCH_CALLS` = N, 100). The answer is not parsed in the counted calls (the client's work).
 * Each arm runs `BENCH_REPEAT` times (2): the spread of the same arm's runs (A/A) is the method's own.
 * On PostgreSQL (`BENCH_DATABASE_URL`) the server's instructions are in its backends, not counted here.
 *
 *   npx tsx bench/security-write.instructions.ts                         # SQLite, arms off and scoped, twice each
 *   BENCH_ARMS=off,scoped,unscoped BENCH_REPEAT=1 npx tsx bench/security-write.instructions.ts
 *   BENCH_KEEP=/tmp/cg npx tsx bench/security-write.instructions.ts     # keep the callgrind files for callgrind_annotate
 *   callgrind_annotate --inclusive=no /tmp/cg/scoped.1.out.3   # .1: the switch-on; then a collection (.2, .4, …) and a counted segment (.3, .5, …) in turn, the reads' first
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { countArms, countSegments, NODE_FLAGS, printViews } from './lib/callgrind.js';

const N = Number(process.env.BENCH_CALLS ?? 100);
const SEGMENT_COUNT = Number(process.env.BENCH_SEGMENTS ?? 11);
const WARM = Number(process.env.BENCH_WARM ?? 1000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const ARMS = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

/** One arm, under callgrind: set-up, warm-up, then the counted segments, each ended by a dump. */
async function child(arm: string): Promise<void> {
  const { openSecurityArm } = await import('./lib/security-calls.js');
  const { read, insert, close } = await openSecurityArm(arm);
  try {
    for (let i = 0; i < WARM; i += 1) await insert();
    // The answer's rows are counted in the warm-up only: parsing it is the client's work, not counted.
    for (let i = 0; i < WARM; i += 1) await read(true);
    await countSegments([{ call: () => read() }, { call: insert }], { segments: SEGMENT_COUNT, n: N });
  } finally {
    await close();
  }
}

async function parent(): Promise<void> {
  const loadAtStart = load();
  const counts = await countArms(fileURLToPath(import.meta.url), ARMS, { repeat: REPEAT, countedSegments: 2 * SEGMENT_COUNT });
  const dialect = process.env.BENCH_DATABASE_URL ? "postgres (the server's instructions not counted)" : 'sqlite';
  console.log(
    `${dialect}, callgrind instructions of the whole node process (every thread; node ${NODE_FLAGS.join(' ')}), ${SEGMENT_COUNT} segments of N=${N} calls after ${WARM} uninstrumented warm-up calls of each, ${REPEAT} run(s) per arm, Node ${process.version}, load ${loadAtStart} at start, ${load()} at end`,
  );
  printViews(counts, ['100-row read', 'single-row insert'], { segments: SEGMENT_COUNT, n: N });
}
