/**
 * The change-pipeline cases of bench/webhooks.bench.ts (issues 16, 18, 19): single-row inserts at
 * 10 concurrency (insert req/s and p99, commit → receipt p50/p99), the 1,000-row append with and
 * without subscribers, a fast webhook's first delivery while 16 slow ones have queues, and the time
 * until deliveries flow again after a worker process is killed with SIGKILL.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { migrateToLatest, type DialectName } from '../../src/db/index.js';
import { outboxStats } from '../../src/modules/events/index.js';
import { benchDatabase } from './databases.js';

export interface ReceiverLike {
  port: number;
  ask<T>(cmd: string): Promise<T>;
}

export interface Stand {
  container: Container;
  app: FastifyInstance;
  auth: Record<string, string>;
  url: string;
  dispose(): Promise<void>;
}

export function benchConfig(dir: string, env: Record<string, string> = {}): Config {
  return loadConfig(
    {
      SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789',
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_BASE_PER_MINUTE: '0',
      RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
      // The delivery knobs, when given, so one command compares settings (e.g. WEBHOOK_LANES=8 against the default).
      ...Object.fromEntries(['WEBHOOK_LANES', 'WEBHOOK_CONCURRENCY'].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : []))),
      ...env,
    },
    { persistSecret: false },
  );
}

export async function stand(dialect: DialectName, dir: string, pgUrl: string | null, env: Record<string, string> = {}): Promise<Stand> {
  const db = await benchDatabase(dialect, dir, { pgUrl, poolSize: 10 });
  const container = createContainer(benchConfig(dir, env), { database: db.handle });
  await migrateToLatest(container.db);
  const app = await buildApp(container, { logger: false });
  await container.accounts.createUser({ email: 'bench@example.com', password: 'password-123' });
  const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bench@example.com', password: 'password-123' } });
  const auth = { authorization: `Token ${login.json<{ token: string }>().token}` };
  return {
    container,
    app,
    auth,
    url: db.url,
    async dispose() {
      await container.dispatcher.stop();
      await container.webhooks.deliverer.stop();
      await app.close();
      await container.close();
      await db.dispose();
    },
  };
}

/** A new base with `hooks` webhooks to these receiver paths; returns its uuid and a Base-Token. */
export async function benchBase(s: Stand, name: string, hookUrls: string[]): Promise<{ uuid: string; token: string }> {
  const created = await s.app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers: s.auth, payload: { name } });
  const base = created.json<{ table: { workspace_id: number; uuid: string } }>().table;
  for (const url of hookUrls) {
    const res = await s.app.inject({ method: 'POST', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/${name}/webhooks/`, headers: s.auth, payload: { url } });
    if (res.statusCode !== 200) throw new Error(`webhook: ${res.body}`);
  }
  const access = await s.app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/${name}/access-token/`, headers: s.auth });
  return { uuid: base.uuid, token: access.json<{ access_token: string }>().access_token };
}

export function append(s: Stand, base: { uuid: string; token: string }, rows: Array<Record<string, unknown>>) {
  return s.app.inject({
    method: 'POST',
    url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`,
    headers: { authorization: `Token ${base.token}` },
    payload: { table_name: 'Table1', rows },
  });
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

async function waitFor(receiver: ReceiverLike, count: number, timeoutMs: number): Promise<void> {
  const start = Date.now();
  for (;;) {
    const { count: n } = await receiver.ask<{ count: number }>('count');
    if (n >= count) return;
    if (Date.now() - start > timeoutMs) throw new Error(`only ${n}/${count} deliveries after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * N single-row inserts at `concurrency` into one base with `webhooks` webhooks (default 1): insert throughput, p99, commit → receipt.
 * With `perSecond`, insert i starts no earlier than i/perSecond s after the first (a paced, modest rate).
 */
export async function singleInserts(
  dialect: DialectName,
  dir: string,
  pgUrl: string | null,
  receiver: ReceiverLike,
  n: number,
  concurrency: number,
  perSecond?: number,
  webhooks = 1,
) {
  const s = await stand(dialect, dir, pgUrl);
  try {
    const base = await benchBase(s, 'single', Array.from({ length: webhooks }, (_, i) => `http://127.0.0.1:${receiver.port}/single/${i}`));
    await receiver.ask('reset');
    s.container.dispatcher.start();
    s.container.webhooks.deliverer.start();
    const committedAt = new Map<string, number>();
    const insertMs: number[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++;
          if (perSecond) {
            const due = started + (i * 1000) / perSecond;
            if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
          }
          const t0 = Date.now();
          const res = await append(s, base, [{ Name: `r${i}` }]);
          if (res.statusCode !== 200) throw new Error(`insert: ${res.body}`);
          committedAt.set(res.json<{ row_ids: Array<{ _id: string }> }>().row_ids[0]!._id, Date.now());
          insertMs.push(Date.now() - t0);
        }
      }),
    );
    const elapsed = Date.now() - started;
    await waitFor(receiver, n * webhooks, 120_000);
    const { received } = await receiver.ask<{ received: Array<{ time: number; rowId: string }> }>('received');
    const latency = received.map((r) => r.time - committedAt.get(r.rowId)!).sort((a, b) => a - b);
    insertMs.sort((a, b) => a - b);
    return { insertsPerSecond: Math.round((n / elapsed) * 1000), insertP99: percentile(insertMs, 0.99), p50: percentile(latency, 0.5), p99: percentile(latency, 0.99) };
  } finally {
    await s.dispose();
  }
}

/**
 * `changes` new rows (appended 1,000 per request) for one webhook whose receiver answers after 10 ms:
 * the time from the first append until every delivery arrived (issue 18 aims at 15 s for 10,000).
 */
export async function manyChangesSlowReceiver(dialect: DialectName, dir: string, pgUrl: string | null, receiver: ReceiverLike, changes: number) {
  const s = await stand(dialect, dir, pgUrl);
  try {
    const base = await benchBase(s, 'many', [`http://127.0.0.1:${receiver.port}/ten-ms`]);
    await receiver.ask('reset');
    s.container.dispatcher.start();
    s.container.webhooks.deliverer.start();
    const started = Date.now();
    for (let i = 0; i < changes; i += 1000) {
      const res = await append(s, base, Array.from({ length: Math.min(1000, changes - i) }, (_, j) => ({ Name: `row ${i + j}` })));
      if (res.statusCode !== 200) throw new Error(`append: ${res.body.slice(0, 300)}`);
    }
    const appendedMs = Date.now() - started;
    await waitFor(receiver, changes, 300_000);
    return { appendedMs, allArrivedMs: Date.now() - started };
  } finally {
    await s.dispose();
  }
}

/** A 1,000-row append and its dispatch, on a base without subscribers and on one with a webhook. */
export async function appendWithAndWithoutSubscribers(dialect: DialectName, dir: string, pgUrl: string | null, receiver: ReceiverLike, rows: number) {
  const s = await stand(dialect, dir, pgUrl);
  try {
    const quiet = await benchBase(s, 'quiet', []);
    const heard = await benchBase(s, 'heard', [`http://127.0.0.1:${receiver.port}/heard`]);
    const body = Array.from({ length: rows }, (_, i) => ({ Name: `row ${i}` }));
    const measure = async (base: { uuid: string; token: string }) => {
      await s.container.dispatcher.runOnce();
      const parsed = outboxStats.parsed;
      const t0 = process.hrtime.bigint();
      await append(s, base, body);
      await s.container.dispatcher.runOnce();
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, parsed: outboxStats.parsed - parsed };
    };
    await measure(quiet); // warm-up
    const results = { quiet: [] as number[], heard: [] as number[], quietParsed: 0, heardParsed: 0 };
    for (let round = 0; round < 5; round++) {
      const q = await measure(quiet);
      const h = await measure(heard);
      results.quiet.push(q.ms);
      results.heard.push(h.ms);
      results.quietParsed = q.parsed;
      results.heardParsed = h.parsed;
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return { quietMs: median(results.quiet), heardMs: median(results.heard), quietParsed: results.quietParsed, heardParsed: results.heardParsed };
  } finally {
    await s.dispose();
  }
}

/** 16 webhooks whose receiver answers after 500 ms with 20 queued deliveries each; then one change for a fast webhook. */
export async function fastBehindSlow(dialect: DialectName, dir: string, pgUrl: string | null, receiver: ReceiverLike) {
  const s = await stand(dialect, dir, pgUrl);
  try {
    const slow = await benchBase(s, 'slow', Array.from({ length: 16 }, (_, i) => `http://127.0.0.1:${receiver.port}/slow/${i}`));
    const fast = await benchBase(s, 'fast', [`http://127.0.0.1:${receiver.port}/fast`]);
    await receiver.ask('reset');
    s.container.dispatcher.start();
    s.container.webhooks.deliverer.start();
    await append(s, slow, Array.from({ length: 20 }, (_, i) => ({ Name: `slow ${i}` })));
    await new Promise((r) => setTimeout(r, 300)); // every slot busy with a slow receiver
    const committed = Date.now();
    await append(s, fast, [{ Name: 'fast' }]);
    for (let i = 0; i < 6000; i++) {
      const { received } = await receiver.ask<{ received: Array<{ time: number; path: string }> }>('received');
      const hit = received.find((r) => r.path === '/fast');
      if (hit) return { fastFirstDeliveryMs: hit.time - committed };
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('the fast webhook got nothing within 30 s');
  } finally {
    await s.dispose();
  }
}

/**
 * A worker process (this module run with `worker <DATABASE_URL> <dir>`) sends a delivery to a
 * receiver that never answers it, is killed with SIGKILL, and a new worker process is started:
 * measured, the time from the kill until the delivery arrives again, and how much of it was the
 * new process's start.
 */
export async function afterKill(dialect: DialectName, dir: string, pgUrl: string | null, receiver: ReceiverLike) {
  const s = await stand(dialect, dir, pgUrl);
  try {
    const base = await benchBase(s, 'killed', [`http://127.0.0.1:${receiver.port}/hang-once`]);
    await receiver.ask('reset');
    await append(s, base, [{ Name: 'in flight when killed' }]);
    const first = startWorker(s.url, dir);
    await first.ready;
    await waitFor(receiver, 1, 30_000); // the attempt is in flight (the receiver holds it)
    first.child.kill('SIGKILL');
    const killed = Date.now();
    await new Promise((r) => first.child.once('exit', r));
    const second = startWorker(s.url, dir);
    await second.ready;
    const ready = Date.now();
    await waitFor(receiver, 2, 60_000);
    const flowing = Date.now();
    second.child.kill('SIGKILL');
    return { killToFlowingMs: flowing - killed, restartMs: ready - killed, readyToFlowingMs: flowing - ready };
  } finally {
    await s.dispose();
  }
}

/**
 * PostgreSQL: two worker processes run; the one holding a delivery in flight is killed with SIGKILL.
 * Measured: the time from the kill until the other one has sent the delivery again (no restart).
 */
export async function takeoverAfterKill(dir: string, pgUrl: string, receiver: ReceiverLike) {
  const s = await stand('postgres', dir, pgUrl);
  try {
    const base = await benchBase(s, 'taken', [`http://127.0.0.1:${receiver.port}/hang-once`]);
    await receiver.ask('reset');
    await append(s, base, [{ Name: 'in flight when killed' }]);
    const first = startWorker(s.url, dir);
    await first.ready;
    await waitFor(receiver, 1, 30_000);
    const second = startWorker(s.url, dir);
    await second.ready;
    await new Promise((r) => setTimeout(r, 1_000)); // the second worker beats and finds the lease held
    first.child.kill('SIGKILL');
    const killed = Date.now();
    await new Promise((r) => first.child.once('exit', r));
    await waitFor(receiver, 2, 60_000);
    const flowing = Date.now();
    second.child.kill('SIGKILL');
    return { killToFlowingMs: flowing - killed };
  } finally {
    await s.dispose();
  }
}

function startWorker(databaseUrl: string, dir: string) {
  const child = fork(fileURLToPath(import.meta.url), ['worker', databaseUrl, dir], { execArgv: process.execArgv, stdio: 'inherit' });
  const ready = new Promise<void>((resolve) => child.once('message', () => resolve()));
  return { child, ready };
}

/** The worker process: dispatcher and deliverer over the given database, as the `worker` role runs them. */
async function runWorker(databaseUrl: string, dir: string): Promise<void> {
  const container = createContainer({ ...benchConfig(dir), databaseUrl });
  const log = { error: (obj: object, msg: string) => console.error(msg, obj) };
  container.dispatcher.useLogger(log);
  container.webhooks.deliverer.useLogger(log);
  container.dispatcher.start();
  container.webhooks.deliverer.start();
  process.send?.({ ready: true });
  setInterval(() => undefined, 60_000); // the loops' timers do not keep a process alive
}

if (process.argv[2] === 'worker' && process.argv[1] === fileURLToPath(import.meta.url)) {
  await runWorker(process.argv[3]!, process.argv[4]!);
}
