/**
 * Issue 33's "under 5%" by instruction counts instead of time: the same two calls as
 * `bench/security-write.bench.ts` (a token-authenticated 100-row read and a single-row insert, through
 * the gateway with `app.inject`: the whole Fastify pipeline in process, no sockets), each arm in a child
 * process of its own under `valgrind --tool=callgrind`, which counts the instructions the process executes
 * (every thread of it) whatever the machine's load:
 *   - off:      an app built on the same container with `withoutAudit` (no trail hooks, no per-use work
 *               for API-Tokens), called with the Base-Token of an unscoped `rw` API-Token: scopes and audit off;
 *   - scoped:   the app as served, with the Base-Token of an API-Token scoped in every dimension (one table,
 *               two operations, an expiry, a network, its own rate budget): every scope check on every call;
 *   - unscoped: (informational, `BENCH_ARMS=off,scoped,unscoped`) the served app with the unscoped token.
 * Segments: the child starts, sets up and warms up (`BENCH_WARM` calls of each, 1000) with instrumentation
 * off (`--instr-atstart=no`; start-up under callgrind is most of a run's time), switches it on
 * (`callgrind_control -i on`), then runs `BENCH_SEGMENTS` (5) segments of N reads, then as many of N
 * inserts (`BENCH_CALLS` = N, 100), reading `process.ppid` before and after each: callgrind's
 * `--dump-before=uv_os_getppid` writes the counts since the last dump there. Before each counted segment
 * a full collection (`gc()`, `--expose-gc`) runs in a dumped segment of its own, not counted: a major
 * collection landing in a counted segment made it 2–5 times the others (with 300 warm-up calls and N,
 * 2N differencing, such segments moved a read from 1.0 M to 2.2 M instructions). Instructions per call =
 * the median segment's / N (a segment where V8 still compiles a function is an outlier), the mean of all
 * segments beside; young-generation collections stay in the counted calls, in proportion to what a call
 * allocates. The answer is not parsed in the counted calls (the client's work).
 * Each arm runs `BENCH_REPEAT` times (2): the spread of the same arm's runs (A/A) is the method's own.
 * On PostgreSQL (`BENCH_DATABASE_URL`) the server's instructions are in its backends, not counted here.
 *
 *   npx tsx bench/security-write.instructions.ts                         # SQLite, arms off and scoped, twice each
 *   BENCH_ARMS=off,scoped,unscoped BENCH_REPEAT=1 npx tsx bench/security-write.instructions.ts
 *   BENCH_KEEP=/tmp/cg npx tsx bench/security-write.instructions.ts     # keep the callgrind files for callgrind_annotate
 *   callgrind_annotate --inclusive=no /tmp/cg/scoped.1.out.4   # .1: the switch-on; .2–.6: the read segments, .7–.11: the inserts
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const N = Number(process.env.BENCH_CALLS ?? 100);
const SEGMENT_COUNT = Number(process.env.BENCH_SEGMENTS ?? 5);
const WARM = Number(process.env.BENCH_WARM ?? 1000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const ARMS = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');
const READ_ROWS = 100;
/** The counted segments a child's dumps make, in order: SEGMENT_COUNT of N reads, then SEGMENT_COUNT of N inserts. */
const SEGMENTS = 2 * SEGMENT_COUNT;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

if (process.argv[2] === 'child') await child(process.argv[3]!);
else await parent();

/** One arm, under callgrind: set-up, warm-up, then the four counted segments, each ended by a dump. */
async function child(arm: string): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { EVERY_DIMENSION, scopedBaseToken, startBasegate } = await import('./lib/servers.js');
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '10000000' });
  const { app: served, container, seeded } = basegate;
  const off = await buildApp(container, { logger: false, withoutAudit: true });
  await off.ready();
  try {
    const expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
    const scopedToken = await scopedBaseToken(basegate, { ...EVERY_DIMENSION, expires_at: expires });
    const [app, token] = arm === 'off' ? [off, seeded.baseToken] : arm === 'scoped' ? [served, scopedToken] : arm === 'unscoped' ? [served, seeded.baseToken] : [];
    if (!app || !token) throw new Error(`unknown arm ${arm}`);
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
    const headers = { authorization: `Token ${token}` };
    const insert = async () => {
      const res = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
      if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    };
    // The answer's rows are counted in the warm-up only: parsing it is the client's work, not counted.
    const read = async (parse = false) => {
      const res = await app.inject({ method: 'GET', url: `${url}?table_name=Table1&limit=${READ_ROWS}`, remoteAddress: '127.0.0.1', headers });
      if (res.statusCode !== 200 || (parse && res.json<{ rows: unknown[] }>().rows.length !== READ_ROWS)) throw new Error(`read: ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    for (let i = 0; i < READ_ROWS; i += 1) await insert();
    for (let i = 0; i < WARM; i += 1) await insert();
    for (let i = 0; i < WARM; i += 1) await read(true);
    // Start-up, set-up and warm-up ran without instrumentation (`--instr-atstart=no`: several times
    // faster under valgrind); it is switched on now, and this process keeps running JavaScript until
    // callgrind_control has done it (valgrind answers it between blocks of code, not in a wait).
    let on = false;
    execFile('callgrind_control', ['-i', 'on', String(process.pid)], (error) => {
      if (error) throw error;
      on = true;
    });
    while (!on) await new Promise((resolve) => setImmediate(resolve));
    const dump = () => process.ppid; // callgrind dumps before uv_os_getppid
    dump();
    // Each counted segment starts after a full collection, in a segment of its own (not counted): a
    // major collection landing in a counted segment made it 2–5 times the others.
    const collect = (globalThis as { gc?: () => void }).gc!;
    for (const call of [read, insert]) {
      for (let segment = 0; segment < SEGMENT_COUNT; segment += 1) {
        collect();
        dump();
        for (let i = 0; i < N; i += 1) await call();
        dump();
      }
    }
  } finally {
    await off.close();
    await basegate.close();
  }
}

async function parent(): Promise<void> {
  const dir = process.env.BENCH_KEEP ?? mkdtempSync(path.join(tmpdir(), 'basegate-callgrind-'));
  mkdirSync(dir, { recursive: true });
  const self = fileURLToPath(import.meta.url);
  const loadAtStart = load();
  /** Per arm, per run: instructions of each segment. */
  const counts = new Map<string, number[][]>();
  // The arms of a run go in parallel (instruction counts do not depend on the machine's load).
  for (let run = 1; run <= REPEAT; run += 1) {
    const runs = ARMS.map(async (arm) => {
      const out = path.join(dir, `${arm}.${run}.out`);
      const started = Date.now();
      await promisify(execFile)(
        'valgrind',
        ['--tool=callgrind', '--instr-atstart=no', '--dump-before=uv_os_getppid', `--callgrind-out-file=${out}`, process.execPath, '--expose-gc', '--import', 'tsx', self, 'child', arm],
        { env: process.env, maxBuffer: 64 * 1024 * 1024 },
      );
      // The dumps are `<out>.1` … `<out>.k`: the one that switched instrumentation on, then a collection's
      // and a counted segment's, in turn (none before: uninstrumented code does not trigger a dump);
      // `<out>` is the teardown.
      const segments = readdirSync(dir)
        .filter((f) => f.startsWith(`${arm}.${run}.out.`))
        .map((f) => Number(f.slice(`${arm}.${run}.out.`.length)))
        .sort((a, b) => a - b)
        .map((k) => instructions(path.join(dir, `${arm}.${run}.out.${k}`)));
      if (segments.length !== 2 * SEGMENTS + 1) throw new Error(`${arm}: ${segments.length} dumps, expected ${2 * SEGMENTS + 1}`);
      console.error(`${arm} run ${run}: ${((Date.now() - started) / 1000).toFixed(0)} s, switch-on segment ${(segments[0]! / 1e6).toFixed(0)} M instructions, collections ${segments.filter((_, i) => i % 2 === 1).map((c) => `${(c / 1e6).toFixed(0)}M`).join(' ')}`);
      return segments.filter((_, i) => i > 0 && i % 2 === 0);
    });
    const done = await Promise.all(runs);
    ARMS.forEach((arm, i) => counts.set(arm, [...(counts.get(arm) ?? []), done[i]!]));
  }
  const dialect = process.env.BENCH_DATABASE_URL ? "postgres (the server's instructions not counted)" : 'sqlite';
  console.log(
    `${dialect}, callgrind instructions of the whole node process (every thread), ${SEGMENT_COUNT} segments of N=${N} calls after ${WARM} uninstrumented warm-up calls of each, ${REPEAT} run(s) per arm, Node ${process.version}, load ${loadAtStart} at start, ${load()} at end`,
  );
  console.log("per call: the median segment's instructions / N, and the mean of all segments; % of the first arm; per run: median (% of the first arm) [min–max of its segments]");
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const k = (v: number) => `${(v / 1e3).toFixed(0)}k`;
  for (const [call, first] of [['100-row read', 0], ['single-row insert', SEGMENT_COUNT]] as const) {
    console.log(call);
    const ofRun = (segments: number[]) => segments.slice(first, first + SEGMENT_COUNT).map((i) => i / N);
    const base = counts.get(ARMS[0]!)!.map(ofRun);
    const baseMedian = mean(base.map(median));
    const baseMean = mean(base.map(mean));
    for (const arm of ARMS) {
      const runs = counts.get(arm)!.map(ofRun);
      const medians = runs.map(median);
      const means = runs.map(mean);
      const detail = runs.map((r, i) => `${k(medians[i]!)} (${((medians[i]! / baseMedian) * 100).toFixed(1)}%) [${k(Math.min(...r))}–${k(Math.max(...r))}]`).join('; ');
      console.log(
        `  ${arm.padEnd(9)} median ${k(mean(medians))} per call, ${((mean(medians) / baseMedian) * 100).toFixed(1)}% | mean ${k(mean(means))}, ${((mean(means) / baseMean) * 100).toFixed(1)}% | runs: ${detail}`,
      );
    }
  }
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
}

/** A callgrind file's instruction total (its `summary:` line). */
function instructions(file: string): number {
  const line = readFileSync(file, 'utf8').match(/^summary: (\d+)/m);
  if (!line) throw new Error(`no summary in ${file}`);
  return Number(line[1]);
}
