/**
 * Where issue 33's cost goes, per function: the arms of `security-write.throughput.ts` (`BENCH_ARMS`, default
 * `off,scoped`) served by this one process over HTTP, taking turns every `BENCH_SLICE_MS` (100) in the paired
 * bench's order (`lib/turn-order.ts`), under V8's sampling profiler (`inspector`). Each sample falls in one
 * arm's slice by its time, so the host's slow drift falls on both arms as in the paired bench. Prints, per arm,
 * the profile's µs per request and, for the functions whose time differs most, the µs per request of each arm
 * (self time; `BENCH_INCLUSIVE=1`: with what they call). The clients run in this process too (undici), the same
 * for both arms except for the token's length. A guide to what to cut, not the verdict: that is the paired
 * bench's.
 *
 *   npx tsx bench/security-write.arm-profile.ts
 *   BENCH_CASE=insert BENCH_SLICES=100 BENCH_INCLUSIVE=1 npx tsx bench/security-write.arm-profile.ts
 */
import { Session, type Profiler } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { INSERT_BODY, openSecurityTargets, READ_QUERY } from './lib/security-calls.js';
import { turnOrder } from './lib/turn-order.js';

const ARMS = (process.env.BENCH_ARMS ?? 'off,scoped').split(',');
const CASE = process.env.BENCH_CASE === 'insert' ? 'insert' : 'read';
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 100);
/** Turns of every arm measured (after 20 untimed ones). */
const SLICES = Number(process.env.BENCH_SLICES ?? 200);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const INCLUSIVE = process.env.BENCH_INCLUSIVE === '1';
const SHOWN = Number(process.env.BENCH_SHOWN ?? 25);

interface Served {
  arm: string;
  pool: Pool;
  token: string;
}
/** One arm's turn: its requests answered between two monotonic times (µs, the profile's clock). */
interface Turn {
  arm: string;
  start: number;
  end: number;
  answered: number;
}

const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

const { targets, url, close } = await openSecurityTargets(ARMS);
const served: Served[] = [];
for (const { arm, app, token } of targets) {
  const origin = app.server.listening ? `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` : await app.listen({ port: 0, host: '127.0.0.1' });
  served.push({ arm, pool: new Pool(origin, { connections: CONNECTIONS }), token });
}

/** CONNECTIONS closed-loop clients for `ms`; the requests answered. */
async function drive({ pool, token }: Served, ms: number): Promise<number> {
  const headers = { authorization: `Token ${token}`, 'content-type': 'application/json' };
  const body = JSON.stringify(INSERT_BODY);
  const end = performance.now() + ms;
  let answered = 0;
  const client = async () => {
    while (performance.now() < end) {
      const res = CASE === 'read' ? await pool.request({ method: 'GET', path: url + READ_QUERY, headers }) : await pool.request({ method: 'POST', path: url, headers, body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${CASE}: ${res.statusCode}`);
      answered += 1;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, client));
  return answered;
}

try {
  for (let i = 0; i < 20; i++) for (const s of served) await drive(s, SLICE_MS);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  const turns: Turn[] = [];
  // In the paired bench's order: every arm follows every other arm alike.
  const order = turnOrder(served.length);
  for (let t = 0; t < SLICES * served.length; t++) {
    const s = served[order[t % order.length]!]!;
    const start = nowMicros();
    const answered = await drive(s, SLICE_MS);
    turns.push({ arm: s.arm, start, end: nowMicros(), answered });
  }
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  report(profile, turns);
} finally {
  for (const s of served) await s.pool.close();
  await close();
}

/** Samples per arm and function, by the turn each sample's time falls in. */
function report(profile: Profiler.Profile, turns: Turn[]): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
  const name = (n: Profiler.ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const counts = new Map(ARMS.map((arm) => [arm, new Map<string, number>()]));
  const samples = new Map(ARMS.map((arm) => [arm, 0]));
  const answered = new Map(ARMS.map((arm) => [arm, 0]));
  for (const t of turns) answered.set(t.arm, answered.get(t.arm)! + t.answered);
  let time = profile.startTime;
  let turn = 0;
  profile.samples!.forEach((id, i) => {
    time += profile.timeDeltas![i]!;
    while (turn < turns.length && turns[turn]!.end < time) turn++;
    const t = turns[turn];
    if (!t || time < t.start) return;
    samples.set(t.arm, samples.get(t.arm)! + 1);
    const byName = counts.get(t.arm)!;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = INCLUSIVE ? parents.get(at) : undefined) {
      const key = name(nodes.get(at)!);
      if (seen.has(key)) continue;
      seen.add(key);
      byName.set(key, (byName.get(key) ?? 0) + 1);
    }
  });
  const interval = (profile.endTime - profile.startTime) / profile.samples!.length;
  const perRequest = (arm: string, n: number) => (n * interval) / answered.get(arm)!;
  console.log(`${CASE}; arms ${ARMS.join(', ')}; ${SLICES} turns of ${SLICE_MS} ms; a sample every ${interval.toFixed(0)} µs (${INCLUSIVE ? 'inclusive' : 'self'} time)`);
  for (const arm of ARMS) console.log(`  ${arm.padEnd(10)} ${answered.get(arm)} requests, ${perRequest(arm, samples.get(arm)!).toFixed(1)} µs each (this process: server and clients)`);
  const [first, ...others] = ARMS as [string, ...string[]];
  const functions = new Set(ARMS.flatMap((arm) => [...counts.get(arm)!.keys()]));
  const rows = [...functions].map((fn) => {
    const figures = ARMS.map((arm) => perRequest(arm, counts.get(arm)!.get(fn) ?? 0));
    return { fn, figures, spread: Math.max(...figures.slice(1).map((f) => Math.abs(f - figures[0]!))) };
  });
  rows.sort((a, b) => b.spread - a.spread);
  console.log(`  µs per request: ${[first, ...others].join(' / ')}`);
  for (const { fn, figures } of rows.slice(0, SHOWN)) console.log(`  ${figures.map((f) => f.toFixed(2).padStart(7)).join(' ')}  ${fn}`);
}
