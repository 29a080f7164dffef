/**
 * NATS publish lag (issue 31.6): rows are inserted through the API at a steady BENCH_RATE rows/s
 * (default 1,000, as BENCH_RATE/10 requests/s of 10 rows) into a base while the outbox streams every
 * change to NATS JetStream. A subscriber on the stream's subjects records when each change arrives;
 * lag = arrival − the insert's 200 response (the commit), per change: p50/p99/max. The same inserts
 * without NATS run first in the same process, so the insert latency with NATS is printed beside its
 * baseline. SQLite file, and PostgreSQL when BENCH_DATABASE_URL is given.
 *
 *   npx tsx bench/nats-lag.bench.ts            # BENCH_SECONDS=10 BENCH_RATE=1000 BENCH_NATS_URL=nats://127.0.0.1:4222
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { DialectName } from '../src/db/index.js';
import { benchBase, stand } from './lib/webhook-cases.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const ROWS_PER_REQUEST = 10;
const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const PG_URL = process.env.BENCH_DATABASE_URL ?? null;

interface Outcome {
  inserted: number;
  insertP50: number;
  insertP99: number;
  lag: { p50: number; p99: number; max: number; received: number } | null;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

async function run(dialect: DialectName, withNats: boolean): Promise<Outcome> {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-bench-nats-'));
  const tag = randomBytes(4).toString('hex');
  const stream = `BENCH_${tag}`;
  const prefix = `bench_${tag}`;
  const env: Record<string, string> = withNats ? { EVENTS_NATS_URL: NATS_URL, EVENTS_NATS_STREAM: stream, EVENTS_NATS_SUBJECT_PREFIX: prefix } : {};
  const s = await stand(dialect, dir, PG_URL, env);
  const { app, container } = s;
  const nc = withNats ? await connect({ servers: NATS_URL }) : null;
  try {
    const base = await benchBase(s, 'bench', []);
    const token = base.token;

    const arrived = new Map<string, number>();
    if (nc) {
      const sub = nc.subscribe(`${prefix}.>`);
      void (async () => {
        for await (const m of sub) arrived.set(m.json<{ row_id: string }>().row_id, Date.now());
      })();
    }
    container.dispatcher.start();
    const committed = new Map<string, number>();
    const insertMs: number[] = [];
    const requests = Math.round((RATE / ROWS_PER_REQUEST) * SECONDS);
    const interval = 1000 / (RATE / ROWS_PER_REQUEST);
    const started = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < requests; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sent = performance.now();
      inFlight.push(
        app
          .inject({
            method: 'POST',
            url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`,
            headers: { authorization: `Token ${token}` },
            payload: { table_name: 'Table1', rows: Array.from({ length: ROWS_PER_REQUEST }, (_, j) => ({ Name: `r${i}-${j}` })) },
          })
          .then((res) => {
            const now = Date.now();
            insertMs.push(performance.now() - sent);
            if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body.slice(0, 200)}`);
            for (const r of res.json<{ row_ids: Array<{ _id: string }> }>().row_ids) committed.set(r._id, now);
          }),
      );
    }
    await Promise.all(inFlight);
    let lag: Outcome['lag'] = null;
    if (nc) {
      const deadline = Date.now() + 60_000;
      while (arrived.size < committed.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const lags = [...committed].map(([id, at]) => (arrived.get(id) ?? Infinity) - at).sort((a, b) => a - b);
      lag = { p50: percentile(lags, 0.5), p99: percentile(lags, 0.99), max: lags[lags.length - 1]!, received: arrived.size };
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => undefined);
    }
    insertMs.sort((a, b) => a - b);
    return { inserted: committed.size, insertP50: percentile(insertMs, 0.5), insertP99: percentile(insertMs, 0.99), lag };
  } finally {
    await nc?.close();
    await s.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

const dialects: DialectName[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
console.log(`NATS publish lag: ${RATE} rows/s for ${SECONDS} s (${RATE / ROWS_PER_REQUEST} requests/s of ${ROWS_PER_REQUEST} rows), NATS at ${NATS_URL}, Node ${process.version}`);
for (const dialect of dialects) {
  const before = loadavg()[0]!.toFixed(2);
  const baseline = await run(dialect, false);
  const streamed = await run(dialect, true);
  const l = streamed.lag!;
  console.log(
    `${dialect}: commit → arrival in NATS p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.received}/${streamed.inserted} changes arrived); ` +
      `insert request p50/p99 ${streamed.insertP50.toFixed(1)}/${streamed.insertP99.toFixed(1)} ms with NATS, ` +
      `${baseline.insertP50.toFixed(1)}/${baseline.insertP99.toFixed(1)} ms without (p99 ratio ${(streamed.insertP99 / baseline.insertP99).toFixed(2)}); load average ${before} → ${loadavg()[0]!.toFixed(2)}`,
  );
}
