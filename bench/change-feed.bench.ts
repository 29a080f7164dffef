/**
 * Change-feed throughput (issue 31): one consumer reads a base's backlog of BENCH_EVENTS changes
 * (default 1,000,000) through `GET …/changes/?after=<cursor>&limit=1000`, page after page, as a
 * program would. Measured: changes/s read, the pages' p50/p99, and the server's memory (RSS and heap,
 * sampled every 100 ms) while it serves them; optionally a filtered pass (`events=modify_row`).
 *
 * The backlog: 1,000 real inserts and 1,000 real modifications through the API (so both stored event
 * forms are there: inserts with their cells in the row, modifications with old and new values), then
 * the outbox's rows copied onto its end in id order (doubling) until BENCH_EVENTS or BENCH_GEN_SECONDS
 * (default 60) is reached; the count is printed. The reader runs in a child process (HTTP over
 * loopback, its own event loop and memory), the server in this one. Reading stops after
 * BENCH_READ_SECONDS (default 40) if the backlog is not through by then.
 *
 *   npx tsx bench/change-feed.bench.ts                    # SQLite file
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/x npx tsx bench/change-feed.bench.ts
 *   BENCH_EVENTS=200000 BENCH_FILTERED=1 npx tsx bench/change-feed.bench.ts
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/index.js';
import { append, benchBase, percentile, stand } from './lib/webhook-cases.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const GEN_SECONDS = Number(process.env.BENCH_GEN_SECONDS ?? 60);
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 40);
const LIMIT = 1000;
const PG_URL = process.env.BENCH_DATABASE_URL ?? null;

interface ReadReport {
  changes: number;
  pages: number;
  ms: number;
  pageP50: number;
  pageP99: number;
  cpuMs: number;
  complete: boolean;
}

// ---- the reader (child process): pages through the feed and reports ----
if (process.argv[2] === 'reader') {
  const [origin, uuid, token, query] = process.argv.slice(3) as [string, string, string, string];
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const pageMs: number[] = [];
  let cursor = '0';
  let changes = 0;
  let pages = 0;
  let complete = false;
  while (performance.now() - started < READ_SECONDS * 1000) {
    const t0 = performance.now();
    const res = await fetch(`${origin}/api-gateway/api/v2/dtables/${uuid}/changes/?after=${cursor}&limit=${LIMIT}${query}`, { headers: { authorization: `Token ${token}` } });
    if (res.status !== 200) throw new Error(`feed: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { changes: unknown[]; cursor: string; has_more: boolean };
    pageMs.push(performance.now() - t0);
    changes += page.changes.length;
    pages++;
    cursor = page.cursor;
    if (!page.has_more) {
      complete = true;
      break;
    }
  }
  const cpu = process.cpuUsage(cpu0);
  pageMs.sort((a, b) => a - b);
  const report: ReadReport = {
    changes,
    pages,
    ms: performance.now() - started,
    pageP50: percentile(pageMs, 0.5),
    pageP99: percentile(pageMs, 0.99),
    cpuMs: (cpu.user + cpu.system) / 1000,
    complete,
  };
  process.send!(report, () => process.exit(0));
}

function readInChild(origin: string, uuid: string, token: string, query: string): Promise<ReadReport> {
  const child = fork(fileURLToPath(import.meta.url), ['reader', origin, uuid, token, query], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as ReadReport));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`reader exited with ${code}`))));
  });
}

/** Peak RSS and heap used of this process (the server) while `work` runs, sampled every 100 ms. */
async function sampled<T>(work: () => Promise<T>): Promise<{ value: T; rssMb: number; heapMb: number }> {
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 100);
  try {
    const value = await work();
    sample();
    return { value, rssMb: Math.round(rss / 2 ** 20), heapMb: Math.round(heap / 2 ** 20) };
  } finally {
    clearInterval(timer);
  }
}

async function run(dialect: DialectName): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-bench-feed-'));
  const s = await stand(dialect, dir, dialect === 'postgres' ? PG_URL : null);
  try {
    const base = await benchBase(s, 'feed', []);
    // Real events of both stored forms: 1,000 inserts (cells kept with the row), then a modification of each.
    const inserted = await append(s, base, Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}` })));
    const rowIds = inserted.json<{ row_ids: Array<{ _id: string }> }>().row_ids.map((r) => r._id);
    const updates = rowIds.map((id, i) => ({ row_id: id, row: { Name: `row ${i} changed` } }));
    const updated = await s.app.inject({
      method: 'PUT',
      url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`,
      headers: { authorization: `Token ${base.token}` },
      payload: { table_name: 'Table1', updates },
    });
    if (updated.statusCode !== 200) throw new Error(`update: ${updated.body}`);

    // Copy the outbox onto its end, in id order, until the backlog is big enough (or the time is up).
    const db = s.container.db;
    const columns = sql.raw('base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id');
    const count = async () => Number((await db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    let total = await count();
    const genStart = performance.now();
    while (total < EVENTS && performance.now() - genStart < GEN_SECONDS * 1000) {
      const take = Math.min(total, EVENTS - total);
      await sql`insert into events (${columns}) select ${columns} from events order by id limit ${take}`.execute(db);
      total += take;
    }
    const genSeconds = (performance.now() - genStart) / 1000;
    if (dialect === 'postgres') await sql`analyze events`.execute(db);
    console.log(`${dialect}: backlog ${total.toLocaleString('en')} changes (${genSeconds.toFixed(1)} s to generate); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

    const origin = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const passes: Array<[string, string]> = [['unfiltered', '']];
    if (process.env.BENCH_FILTERED === '1') passes.push(['events=modify_row', '&events=modify_row']);
    for (const [label, query] of passes) {
      const cpu0 = process.cpuUsage();
      const { value: r, rssMb, heapMb } = await sampled(() => readInChild(origin, base.uuid, base.token, query));
      const cpu = process.cpuUsage(cpu0);
      const perSecond = Math.round((r.changes / r.ms) * 1000);
      console.log(
        `${dialect} ${label.padEnd(18)} ${r.changes.toLocaleString('en')} changes in ${(r.ms / 1000).toFixed(1)} s${r.complete ? '' : ' (time limit)'}: ` +
          `${perSecond.toLocaleString('en')} changes/s; page of ${LIMIT}: p50 ${r.pageP50.toFixed(0)} ms, p99 ${r.pageP99.toFixed(0)} ms; ` +
          `server CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms, reader CPU ${Math.round(r.cpuMs)} ms; server peak RSS ${rssMb} MB, heap used ${heapMb} MB`,
      );
    }
  } finally {
    await s.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] !== 'reader') {
  await run('sqlite');
  if (PG_URL) await run('postgres');
}
