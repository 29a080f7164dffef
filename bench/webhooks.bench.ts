/**
 * Webhook delivery throughput and latency: append rows through the API to a base that has 1 or 10
 * webhooks pointing at a local receiver. Measured: the time until every delivery has arrived,
 * deliveries per second, and p50/p99 from the append's commit (its 200 response) to receipt.
 * The dispatcher and the delivery worker run as in production (started loops, real clock), on a
 * SQLite file and, when a PostgreSQL URL is given, on PostgreSQL. The receiver runs in a child
 * process so it does not share the server's event loop.
 *
 *   npx tsx bench/webhooks.bench.ts                                  # BENCH_ROWS=1000 BENCH_WEBHOOKS=1,10
 *   BENCH_CASES=pipeline BENCH_SINGLE_INSERTS=1000 BENCH_SINGLE_WEBHOOKS=1,10 BENCH_MANY_CHANGES=10000 npx tsx bench/webhooks.bench.ts
 *   BENCH_CASES=faults npx tsx bench/webhooks.bench.ts               # kill -9 recovery (and takeover on PostgreSQL), fairness
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhooks.bench.ts
 * The pipeline cases print issue 18's three aims as "aim …: met/missed" (p99 commit → receipt under
 * 100 ms with one webhook and under 250 ms with ten, at 1,000 inserts; 10,000 changes to a 10 ms
 * receiver within 15 s). `bench/webhooks.probe.ts` splits one delivery's time into its hops.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { createContainer } from '../src/container.js';
import { migrateToLatest, type DialectName } from '../src/db/index.js';
import { benchDatabase } from './lib/databases.js';
import { startReceiverChild } from './lib/receiver-child.js';
import {
  afterKill,
  appendWithAndWithoutSubscribers,
  benchConfig,
  fastBehindSlow,
  manyChangesSlowReceiver,
  singleInserts,
  takeoverAfterKill,
} from './lib/webhook-cases.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const WEBHOOK_COUNTS = (process.env.BENCH_WEBHOOKS ?? '1,10').split(',').map(Number);
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? null;
const TIMEOUT_MS = 120_000;
/** Which parts run: `bulk` (the append above), `pipeline` (single inserts, append with/without subscribers), `faults` (kill -9, fairness). */
const CASES = (process.env.BENCH_CASES ?? 'bulk,pipeline,faults').split(',');
const SINGLE_INSERTS = Number(process.env.BENCH_SINGLE_INSERTS ?? 1000);
const PACED_INSERTS = Number(process.env.BENCH_PACED_INSERTS ?? 500);
/** Webhook counts of the single-insert case (issue 18 aims: p99 under 100 ms with 1, under 250 ms with 10). */
const SINGLE_WEBHOOKS = (process.env.BENCH_SINGLE_WEBHOOKS ?? '1,10').split(',').map(Number);
/** Changes of the slow-receiver case (issue 18: 10,000 to one webhook answering after 10 ms, all within 15 s). */
const MANY_CHANGES = Number(process.env.BENCH_MANY_CHANGES ?? 10_000);
/** Issue 18's webhook aims (on SQLite; PostgreSQL is printed against the same bounds). */
const AIM_P99_MS: Record<number, number> = { 1: 100, 10: 250 };
const AIM_MANY_CHANGES_MS = 15_000;

// ---- receiver (child process): records the wall-clock receipt time of every POST ----
if (process.argv[2] === 'receiver') {
  const times: number[] = [];
  const received: Array<{ time: number; path: string; rowId: string }> = [];
  let hung = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const time = Date.now();
      times.push(time);
      let rowId = '';
      try {
        rowId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { row_id: string } }).data.row_id;
      } catch {
        // not an event body
      }
      const path = req.url ?? '';
      received.push({ time, path, rowId });
      // `/hang-once`: the first request is never answered (a delivery in flight when the worker dies).
      if (path === '/hang-once' && !hung) {
        hung = true;
        return;
      }
      if (path.startsWith('/slow')) setTimeout(() => res.writeHead(204).end(), 500);
      else if (path === '/ten-ms') setTimeout(() => res.writeHead(204).end(), 10);
      else res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (message: { cmd: string }) => {
    if (message.cmd === 'reset') {
      times.length = 0;
      received.length = 0;
      hung = false;
      process.send!({ ok: true });
    }
    if (message.cmd === 'count') process.send!({ count: times.length });
    if (message.cmd === 'times') process.send!({ times });
    if (message.cmd === 'received') process.send!({ received });
  });
} else {
  await main();
}

interface Receiver {
  port: number;
  ask<T>(cmd: string): Promise<T>;
  child: ChildProcess;
}

function startReceiver(): Promise<Receiver> {
  return startReceiverChild();
}

function database(dialect: DialectName, dir: string) {
  return benchDatabase(dialect, dir, { pgUrl: PG_URL, poolSize: 10 });
}

interface Result {
  dialect: DialectName;
  webhooks: number;
  deliveries: number;
  appendMs: number;
  allArrivedMs: number;
  perSecond: number;
  p50: number;
  p99: number;
}

async function runCase(dialect: DialectName, webhooks: number, receiver: Receiver, dir: string): Promise<Result> {
  const config = benchConfig(dir);
  const db = await database(dialect, dir);
  const container = createContainer(config, { database: db.handle });
  try {
    await migrateToLatest(container.db);
    const app = await buildApp(container, { logger: false });
    await container.accounts.createUser({ email: 'bench@example.com', password: 'password-123' });
    const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bench@example.com', password: 'password-123' } });
    const auth = { authorization: `Token ${login.json<{ token: string }>().token}` };
    const created = await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers: auth, payload: { name: 'bench' } });
    const base = created.json<{ table: { workspace_id: number; uuid: string } }>().table;
    const hooks = `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/webhooks/`;
    for (let i = 0; i < webhooks; i++) {
      const res = await app.inject({ method: 'POST', url: hooks, headers: auth, payload: { url: `http://127.0.0.1:${receiver.port}/hook/${i}`, secret: `secret-${i}` } });
      if (res.statusCode !== 200) throw new Error(`webhook: ${res.body}`);
    }
    const access = await app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/access-token/`, headers: auth });
    const token = access.json<{ access_token: string }>().access_token;
    const rows = Array.from({ length: ROWS }, (_, i) => ({ Name: `row ${i}` }));
    await receiver.ask('reset');
    container.dispatcher.start();
    container.webhooks.deliverer.start();

    const started = Date.now();
    const appended = await app.inject({
      method: 'POST',
      url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`,
      headers: { authorization: `Token ${token}` },
      payload: { table_name: 'Table1', rows },
    });
    const committed = Date.now();
    if (appended.statusCode !== 200) throw new Error(`append: ${appended.statusCode} ${appended.body.slice(0, 300)}`);
    const expected = ROWS * webhooks;
    for (;;) {
      const { count } = await receiver.ask<{ count: number }>('count');
      if (count >= expected) break;
      if (Date.now() - committed > TIMEOUT_MS) throw new Error(`only ${count}/${expected} deliveries after ${TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const { times } = await receiver.ask<{ times: number[] }>('times');
    await container.dispatcher.stop();
    await container.webhooks.deliverer.stop();
    await app.close();
    const latencies = times.map((time) => time - committed).sort((a, b) => a - b);
    const last = latencies[latencies.length - 1]!;
    return {
      dialect,
      webhooks,
      deliveries: times.length,
      appendMs: committed - started,
      allArrivedMs: last,
      perSecond: Math.round((times.length / Math.max(1, last)) * 1000),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    };
  } finally {
    await container.close();
    await db.dispose();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const dialects: DialectName[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  const receiver = await startReceiver();
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-bench-webhooks-'));
  const results: Result[] = [];
  try {
    for (const dialect of CASES.includes('bulk') ? dialects : []) {
      for (const webhooks of WEBHOOK_COUNTS) {
        const result = await runCase(dialect, webhooks, receiver, dir);
        results.push(result);
        process.stderr.write(`${dialect} ×${webhooks}: done\n`);
      }
    }
    for (const dialect of dialects) await pipelineCases(dialect, receiver, dir);
  } finally {
    receiver.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  if (results.length === 0) return;
  console.log(`\nWebhook delivery: append ${ROWS} rows in one request, wait for every delivery (Node ${process.version})\n`);
  console.log('dialect   webhooks  deliveries  append ms  all arrived ms  deliveries/s  p50 ms  p99 ms');
  for (const r of results) {
    console.log(
      [
        r.dialect.padEnd(9),
        String(r.webhooks).padStart(8),
        String(r.deliveries).padStart(11),
        String(r.appendMs).padStart(10),
        String(r.allArrivedMs).padStart(15),
        String(r.perSecond).padStart(13),
        String(r.p50).padStart(7),
        String(r.p99).padStart(7),
      ].join(' '),
    );
  }
}

function verdict(met: boolean): string {
  return met ? 'met' : 'missed';
}

/** Issues 16, 18 and 19: printed as each case finishes. */
async function pipelineCases(dialect: DialectName, receiver: Receiver, dir: string): Promise<void> {
  if (CASES.includes('pipeline')) {
    for (const webhooks of SINGLE_WEBHOOKS) {
      const single = await singleInserts(dialect, dir, PG_URL, receiver, SINGLE_INSERTS, 10, undefined, webhooks);
      console.log(
        `${dialect}: ${SINGLE_INSERTS} single-row inserts at 10 concurrency into one base with ${webhooks} webhook(s): ` +
          `${single.insertsPerSecond} inserts/s, insert p99 ${single.insertP99} ms; commit → receipt p50 ${single.p50} ms, p99 ${single.p99} ms`,
      );
      const aim = AIM_P99_MS[webhooks];
      if (aim !== undefined && SINGLE_INSERTS === 1000) {
        console.log(`${dialect}: aim p99 commit → receipt under ${aim} ms with ${webhooks} webhook(s): ${verdict(single.p99 < aim)} (p99 ${single.p99} ms)`);
      }
    }
    if (MANY_CHANGES > 0) {
      const many = await manyChangesSlowReceiver(dialect, dir, PG_URL, receiver, MANY_CHANGES);
      console.log(
        `${dialect}: ${MANY_CHANGES} changes to one webhook whose receiver answers after 10 ms: all arrived ${many.allArrivedMs} ms after the first append ` +
          `(appends took ${many.appendedMs} ms)`,
      );
      if (MANY_CHANGES === 10_000) {
        console.log(`${dialect}: aim 10,000 changes to a 10 ms receiver all arrived within 15 s: ${verdict(many.allArrivedMs <= AIM_MANY_CHANGES_MS)} (${many.allArrivedMs} ms)`);
      }
    }
    const paced = await singleInserts(dialect, dir, PG_URL, receiver, PACED_INSERTS, 10, 50);
    console.log(
      `${dialect}: ${PACED_INSERTS} single-row inserts paced at 50/s, one webhook: commit → receipt p50 ${paced.p50} ms, p99 ${paced.p99} ms`,
    );
    const bulk = await appendWithAndWithoutSubscribers(dialect, dir, PG_URL, receiver, ROWS);
    console.log(
      `${dialect}: ${ROWS}-row append + dispatch, median of 5: without subscribers ${bulk.quietMs.toFixed(1)} ms (${bulk.quietParsed} events parsed), ` +
        `with one webhook ${bulk.heardMs.toFixed(1)} ms (${bulk.heardParsed} parsed); ratio ${(bulk.quietMs / bulk.heardMs).toFixed(2)}`,
    );
  }
  if (CASES.includes('faults')) {
    const fair = await fastBehindSlow(dialect, dir, PG_URL, receiver);
    console.log(`${dialect}: fast webhook's first delivery while 16 slow webhooks (500 ms) have 20 queued each: ${fair.fastFirstDeliveryMs} ms after its commit`);
    const kill = await afterKill(dialect, dir, PG_URL, receiver);
    console.log(
      `${dialect}: kill -9 of the worker with a delivery in flight → delivered again ${kill.killToFlowingMs} ms after the kill ` +
        `(new process ready after ${kill.restartMs} ms, then ${kill.readyToFlowingMs} ms)`,
    );
    if (dialect === 'postgres' && PG_URL) {
      const takeover = await takeoverAfterKill(dir, PG_URL, receiver);
      console.log(`${dialect}: kill -9 of one of two workers with a delivery in flight → sent again by the other ${takeover.killToFlowingMs} ms after the kill`);
    }
  }
}

