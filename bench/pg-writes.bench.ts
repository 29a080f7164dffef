/**
 * PostgreSQL single-row writes through the HTTP API at BENCH_CONNECTIONS (10) clients (issue 34 item 4),
 * beside the plain write in the same run:
 *  - `plain insert`: a route of the same server inserting the same row shape into `base_rows` with one
 *    Kysely statement (no token check, no events, no log): the database's and HTTP's own cost;
 *  - `basegate insert, batched`: `POST …/rows/` of one row (one statement: rows, log, events, revision;
 *    appends of the base that arrive while one is in flight go together in the next, BaseWriter.batches);
 *  - `basegate insert, batched, two in flight`: the same with up to two statements of the base in flight,
 *    the second waiting for the base's lock inside PostgreSQL (AppendBatches; the default is one);
 *  - `basegate insert, each alone`: the same, every append its own statement (the path before the batches);
 *  - `basegate insert, transaction`: the same with every append in a transaction (the path before);
 *  - `concurrent appends` (PG_CONCURRENT_APPENDS): the batched and each-alone appends with appends of one
 *    base committing side by side (KEY SHARE gate, revision stripes, event-id blocks), and its pairs;
 *  - read-after-write pairs (`POST …/rows/` then `GET …/rows/?limit=100` on one connection, again and
 *    again) for basegate, and a plain pair (plain insert then a plain 100-row select).
 * Targets are measured round-robin (BENCH_ROUNDS), medians; ratios within each round to the plain insert.
 * CPU per request: this process's (the server's; the load generator runs apart) and the database's
 * (its backends for BENCH_DATABASE_URL's database, when PostgreSQL runs on this machine).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/pg-writes.bench.ts
 *
 * Knobs: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_POOL (DATABASE_POOL_SIZE, default the server's),
 * BENCH_ONLY (targets whose name contains one of these comma-separated words; the plain insert always runs).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { load, median } from './lib/harness.js';
import { startBasegate } from './lib/servers.js';
import { postgresBackendsCpu, postgresCpuSince } from './lib/postgres-cpu.js';
import { APPEND_BATCH_LIMITS } from '../src/modules/rows/append-batches.js';

if (!process.env.BENCH_DATABASE_URL?.startsWith('postgres')) throw new Error('pg-writes.bench needs BENCH_DATABASE_URL (PostgreSQL)');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const run = promisify(execFile);

let baseId = 0;
const rowId = () => randomBytes(16).toString('base64url').slice(0, 22);
const server = await startBasegate(
  {
    RATE_LIMIT_BASE_PER_MINUTE: '0',
    RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
    ...(process.env.BENCH_POOL ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL } : {}),
  },
  {
    routes: (app) => {
      // The same row shape as a one-row append stores, in one plain Kysely INSERT (autocommit).
      app.post('/plain-insert', async (request) => {
        const now = Date.now();
        const name = (request.body as { name?: string }).name ?? '';
        await server.container.db
          .insertInto('base_rows')
          .values({ base_id: baseId, table_id: 'PLN0', row_id: rowId(), data: JSON.stringify({ '0000': name }), ctime: now, mtime: now, creator: 'bench@auth.local', last_modifier: 'bench@auth.local' })
          .execute();
        return { inserted_row_count: 1 };
      });
      app.get('/plain-page', async () => {
        const rows = await server.container.db.selectFrom('base_rows').selectAll().where('base_id', '=', baseId).where('table_id', '=', 'PLN0').orderBy('id').limit(100).execute();
        return { rows };
      });
    },
  },
);
const { container, seeded, origin } = server;
baseId = Number((await container.db.selectFrom('bases').select('id').where('uuid', '=', seeded.base.uuid).executeTakeFirstOrThrow()).id);
const writer = container.baseData.writer;
const batched = (inFlight: number, concurrent = false) => {
  writer.concurrentAppends = false;
  writer.oneStatementAppends = true;
  writer.batchAppends = true;
  writer.batches.limits.inFlight = inFlight;
  // PG_CONCURRENT_APPENDS (sets its own statements in flight).
  if (concurrent) writer.concurrentAppends = true;
};
const auth = { authorization: `Bearer ${seeded.baseToken}` };
const rowsUrl = `${origin}/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
const databaseName = new URL(process.env.BENCH_DATABASE_URL).pathname.slice(1);
const insertBody = JSON.stringify({ table_name: 'Table1', rows: [{ Name: 'bench row' }] });

interface Target {
  name: string;
  /** Before each measurement (e.g. the writer's mode). */
  setup?: () => void;
  measure: () => Promise<Measured>;
}

interface Measured {
  rate: number;
  p50: number;
  p99: number;
  failed: number;
}

/** A measurement with the CPU it cost per request (or pair): this process (the server) and the database's backends. */
async function withCpu(target: Target): Promise<Measured & { serverCpu: number; dbCpu: number | undefined }> {
  const db = postgresBackendsCpu(databaseName);
  const server = process.cpuUsage();
  const m = await target.measure();
  const used = process.cpuUsage(server);
  const dbUsed = postgresCpuSince(db, databaseName);
  const count = Math.max(1, m.rate * SECONDS);
  return { ...m, serverCpu: (used.user + used.system) / count, dbCpu: dbUsed === undefined ? undefined : dbUsed / count };
}

async function pairs(write: { path: string; headers: Record<string, string>; body: string }, read: { path: string; headers: Record<string, string> }) {
  const child = fileURLToPath(new URL('./lib/pairs-child.ts', import.meta.url));
  const config = {
    url: origin,
    connections: CONNECTIONS,
    seconds: SECONDS,
    write: { method: 'POST', path: write.path, headers: { ...write.headers, 'content-type': 'application/json' }, body: write.body },
    read: { method: 'GET', path: read.path, headers: read.headers },
  };
  const { stdout } = await run(process.execPath, ['--import', 'tsx', child, JSON.stringify(config)], { maxBuffer: 1 << 24 });
  const out = JSON.parse(stdout) as { pairs: number; p50: number; p99: number; failed: number };
  return { rate: out.pairs, p50: out.p50, p99: out.p99, failed: out.failed };
}

const insert = async () => {
  const r = await load({ name: 'insert', url: rowsUrl, method: 'POST', headers: auth, body: insertBody }, { seconds: SECONDS, connections: CONNECTIONS });
  return { rate: r.rps, p50: r.p50, p99: r.p99, failed: r.failed };
};
const allTargets: Target[] = [
  {
    name: 'plain insert (Kysely, same row shape)',
    measure: async () => {
      const r = await load({ name: 'plain', url: `${origin}/plain-insert`, method: 'POST', body: '{"name":"bench row"}' }, { seconds: SECONDS, connections: CONNECTIONS });
      return { rate: r.rps, p50: r.p50, p99: r.p99, failed: r.failed };
    },
  },
  { name: 'basegate insert (one statement, batched)', setup: () => batched(APPEND_BATCH_LIMITS.inFlight), measure: insert },
  { name: 'basegate insert (batched, two in flight)', setup: () => batched(2), measure: insert },
  { name: 'basegate insert (concurrent appends, batched)', setup: () => batched(APPEND_BATCH_LIMITS.inFlight, true), measure: insert },
  { name: 'basegate insert (one statement, each alone)', setup: () => (batched(1), (writer.batchAppends = false)), measure: insert },
  { name: 'basegate insert (concurrent appends, each alone)', setup: () => (batched(1, true), (writer.batchAppends = false)), measure: insert },
  { name: 'basegate insert (transaction, before)', setup: () => (batched(1), (writer.oneStatementAppends = false)), measure: insert },
  {
    name: 'plain pairs (insert, then 100-row select)',
    measure: () => pairs({ path: '/plain-insert', headers: {}, body: '{"name":"bench row"}' }, { path: '/plain-page', headers: {} }),
  },
  {
    name: 'basegate pairs (insert, then 100-row page)',
    setup: () => batched(APPEND_BATCH_LIMITS.inFlight),
    measure: () =>
      pairs(
        { path: new URL(rowsUrl).pathname, headers: auth, body: insertBody },
        { path: `${new URL(rowsUrl).pathname}?table_name=Table1&limit=100`, headers: auth },
      ),
  },
  {
    name: 'basegate pairs, concurrent appends (insert, then 100-row page)',
    setup: () => batched(APPEND_BATCH_LIMITS.inFlight, true),
    measure: () =>
      pairs(
        { path: new URL(rowsUrl).pathname, headers: auth, body: insertBody },
        { path: `${new URL(rowsUrl).pathname}?table_name=Table1&limit=100`, headers: auth },
      ),
  },
];

const only = process.env.BENCH_ONLY?.split(',').map((w) => w.trim().toLowerCase());
const targets = allTargets.filter((t, i) => i === 0 || only === undefined || only.some((w) => t.name.toLowerCase().includes(w)));
console.log(`PostgreSQL single-row writes, ${CONNECTIONS} connections, ${SECONDS} s × ${ROUNDS} rounds; load before: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
// Warm-up: the writer reads the base's metadata, the pool fills, the JIT settles.
for (const target of targets) {
  target.setup?.();
  await target.measure();
}
const results = targets.map(() => [] as Array<Awaited<ReturnType<typeof withCpu>>>);
const statsBefore = { ...writer.oneStatementStats };
const batchesBefore = { ...writer.batches.stats };
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, target] of targets.entries()) {
    target.setup?.();
    results[i]!.push(await withCpu(target));
  }
}
batched(APPEND_BATCH_LIMITS.inFlight);
console.log(`${'target'.padEnd(46)} ${'per s'.padStart(7)} ${'vs plain'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'srv µs'.padStart(7)} ${'db µs'.padStart(6)} failed  rounds`);
const cpu = (xs: Array<number | undefined>) => (xs.some((x) => x === undefined) ? '—' : median(xs as number[]).toFixed(0));
for (const [i, target] of targets.entries()) {
  const rs = results[i]!;
  const ratio = median(rs.map((r, round) => r.rate / results[0]![round]!.rate));
  console.log(
    `${target.name.padEnd(46)} ${median(rs.map((r) => r.rate)).toFixed(0).padStart(7)} ${`${(ratio * 100).toFixed(0)}%`.padStart(9)} ${median(rs.map((r) => r.p50)).toFixed(1).padStart(7)} ${median(rs.map((r) => r.p99)).toFixed(1).padStart(7)} ${cpu(rs.map((r) => r.serverCpu)).padStart(7)} ${cpu(rs.map((r) => r.dbCpu)).padStart(6)} ${String(rs.reduce((n, r) => n + r.failed, 0)).padStart(6)}  ${rs.map((r) => r.rate.toFixed(0)).join(' ')}`,
  );
}
const stats = writer.oneStatementStats;
const batches = writer.batches.stats;
const sent = batches.statements - batchesBefore.statements;
console.log(`one-statement appends: ${stats.written - statsBefore.written} written, ${stats.redone - statsBefore.redone} redone in a transaction; batched: ${batches.appends - batchesBefore.appends} appends in ${sent} statements (${((batches.appends - batchesBefore.appends) / Math.max(1, sent)).toFixed(1)} each, largest ${batches.largest}); load after: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
await server.close();
