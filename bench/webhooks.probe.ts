/**
 * Where a webhook delivery's time goes (issue 18): 1,000 single-row inserts at 10 concurrency, one
 * webhook (BENCH_SINGLE_WEBHOOKS), receiver in a child process answering at once. For every delivery:
 * commit (the insert's 200) → queued (the delivery row's created_at) → sent (its attempt's started_at)
 * → received (the receiver's clock; same machine). Also counts the claims made and the deliveries
 * handed off in memory (no claim).
 *
 *   npx tsx bench/webhooks.probe.ts          # BENCH_SINGLE_INSERTS=1000 BENCH_SINGLE_WEBHOOKS=1
 *   BENCH_RATE=50 BENCH_SINGLE_INSERTS=500 npx tsx bench/webhooks.probe.ts   # steady 50 inserts/s (issue 31.8)
 *   BENCH_CHECKOUT=/path/to/other/checkout npx tsx bench/webhooks.probe.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_RATE=50 npx tsx bench/webhooks.probe.ts   # on PostgreSQL
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startReceiverChild, webhookCases } from './lib/receiver-child.js';

const WEBHOOKS = Number(process.env.BENCH_SINGLE_WEBHOOKS ?? 1);
const INSERTS = Number(process.env.BENCH_SINGLE_INSERTS ?? 1000);
const CONCURRENCY = 10;
const RATE = Number(process.env.BENCH_RATE ?? 0);
const { port, ask, child } = await startReceiverChild();
const checkout = process.env.BENCH_CHECKOUT;
const cases = await webhookCases();
const dir = mkdtempSync(path.join(tmpdir(), 'basegate-probe-webhooks-'));

function spread(label: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${label.padEnd(20)} p50 ${String(cases.percentile(sorted, 0.5)).padStart(5)} ms  p90 ${String(cases.percentile(sorted, 0.9)).padStart(5)} ms  p99 ${String(cases.percentile(sorted, 0.99)).padStart(5)} ms`;
}

try {
  const pgUrl = process.env.BENCH_DATABASE_URL ?? null;
  const s = await cases.stand(pgUrl ? 'postgres' : 'sqlite', dir, pgUrl);
  try {
    const base = await cases.benchBase(s, 'probe', Array.from({ length: WEBHOOKS }, (_, i) => `http://127.0.0.1:${port}/probe/${i}`));
    await ask('reset');
    // Counted by wrapping the worker's methods (a probe, not production code).
    const delivery = s.container.webhooks.delivery as unknown as Record<string, (...args: unknown[]) => unknown>;
    let claims = 0;
    let handedOff = 0;
    const handedIds = new Set<number>();
    const claim = delivery.claim!.bind(delivery);
    delivery.claim = (...args: unknown[]) => {
      claims++;
      return claim(...args);
    };
    if (typeof delivery.accept === 'function') {
      const accept = delivery.accept.bind(delivery);
      delivery.accept = (...args: unknown[]) => {
        handedOff += (args[0] as unknown[]).length;
        for (const d of args[0] as Array<{ id: number }>) handedIds.add(Number(d.id));
        return accept(...args);
      };
    }
    // BENCH_TRACE=1: how often the loops ran and how long each outbox consumer took (wrapped methods).
    const counts: Record<string, number> = {};
    const add = (key: string, n = 1) => (counts[key] = Math.round((counts[key] ?? 0) + n));
    const timed = (obj: unknown, name: string, label: (args: unknown[]) => string) => {
      const target = obj as Record<string, (...args: unknown[]) => unknown>;
      const fn = target[name]!.bind(target);
      target[name] = (...args: unknown[]) => {
        const t0 = performance.now();
        const key = label(args);
        add(`${key} calls`);
        const out = fn(...args);
        if (out instanceof Promise) return out.finally(() => add(`${key} ms`, performance.now() - t0));
        return out;
      };
    };
    if (process.env.BENCH_TRACE) {
      const dispatcher = s.container.dispatcher as unknown as { current: unknown };
      timed(dispatcher, 'tick', () => 'dispatcher tick');
      timed(dispatcher, 'runAll', () => 'dispatcher run');
      timed(dispatcher, 'runConsumer', (args) => `consumer ${(args[0] as { name: string }).name}`);
      timed(dispatcher, 'wake', () => (dispatcher.current ? 'wake while running' : 'wake while idle'));
      timed(delivery, 'runPool', () => 'delivery pool');
    }
    s.container.dispatcher.start();
    s.container.webhooks.deliverer.start();
    const committedAt = new Map<string, number>();
    let next = 0;
    const startedAt = Date.now();
    const cpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < INSERTS) {
          next++;
          // BENCH_RATE: insert i starts no earlier than i/rate s after the first (the steady-rate case).
          if (RATE > 0) {
            const wait = startedAt + (next * 1000) / RATE - Date.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
          const res = await cases.append(s, base, [{ Name: `row ${next}` }]);
          committedAt.set(res.json<{ row_ids: Array<{ _id: string }> }>().row_ids[0]!._id, Date.now());
        }
      }),
    );
    for (;;) {
      const { count } = await ask<{ count: number }>('count');
      if (count >= INSERTS * WEBHOOKS) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const cpu = process.cpuUsage(cpu0);
    // Once every delivery arrived and was recorded, no slot may stay taken (a leak would end the hand-off).
    for (let i = 0; i < 200 && Number(delivery.inFlight ?? 0) > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const slots = { inFlight: delivery.inFlight, reserved: delivery.reserved };
    const { received } = await ask<{ received: Array<{ time: number; path: string; rowId: string }> }>('received');
    const rows = await s.container.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_attempts as a', 'a.delivery_id', 'd.id')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.row_key', 'd.created_at', 'a.started_at', 'w.url'])
      .execute();
    const byKey = new Map(rows.map((r) => [`${new URL(r.url).pathname}|${r.row_key}`, r]));
    const queued: number[] = [];
    const sent: number[] = [];
    const arrived: number[] = [];
    const total: number[] = [];
    const viaHandoff: number[] = [];
    const viaClaim: number[] = [];
    for (const r of received) {
      const row = byKey.get(`${r.path}|${r.rowId}`);
      const commit = committedAt.get(r.rowId);
      if (!row || commit === undefined) continue;
      queued.push(Number(row.created_at) - commit);
      sent.push(Number(row.started_at) - Number(row.created_at));
      arrived.push(r.time - Number(row.started_at));
      total.push(r.time - commit);
      (handedIds.has(Number(row.id)) ? viaHandoff : viaClaim).push(r.time - commit);
    }
    console.log(`${checkout ?? '.'}: ${INSERTS} single-row inserts at ${CONCURRENCY} concurrency, ${WEBHOOKS} webhook(s); ${claims} claims, ${handedOff} handed off; CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms; slots taken at the end ${JSON.stringify(slots)}`);
    if (process.env.BENCH_TRACE) console.log(JSON.stringify(counts));
    console.log(spread('commit → queued', queued));
    console.log(spread('queued → sent', sent));
    console.log(spread('sent → received', arrived));
    console.log(spread('commit → received', total));
    console.log(spread(`  handed off (${viaHandoff.length})`, viaHandoff));
    console.log(spread(`  via claim (${viaClaim.length})`, viaClaim));
  } finally {
    await s.dispose();
  }
} finally {
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}
