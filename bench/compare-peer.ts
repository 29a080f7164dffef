/**
 * basegate beside a peer (NocoDB, REST API v2) on the same machine, the same cases, side by side:
 *   - read: `GET` 100 rows (autocannon, BENCH_CONNECTIONS connections, BENCH_SECONDS s, BENCH_ROUNDS rounds)
 *   - single insert: `POST` one row (autocannon, same settings)
 *   - bulk insert: 1,000 rows in one call (median of BENCH_BULK_ITERATIONS)
 *   - webhook latency: BENCH_HOOK_INSERTS single-row inserts at 10 concurrency, one webhook to a local
 *     receiver (a child process answering at once): p50/p99 from the insert's response to receipt
 *
 *   npx tsx bench/compare-peer.ts                                   # basegate alone
 *   PEER_URL=http://127.0.0.1:8080 PEER_TOKEN=<xc-token> npx tsx bench/compare-peer.ts
 *
 * Not run by CI. basegate runs in this process (SQLite under a fresh DATA_DIR, or BENCH_DATABASE_URL),
 * as bench/lib/servers.ts starts it; the peer is whatever runs at PEER_URL (a local NocoDB: the script
 * creates a base, a table and a webhook there with the API token, and deletes the base at the end).
 * Rate limits of basegate are off, as the peer has none by default. See bench/README.md.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median } from './lib/harness.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BULK_ITERATIONS = Number(process.env.BENCH_BULK_ITERATIONS ?? 5);
const HOOK_INSERTS = Number(process.env.BENCH_HOOK_INSERTS ?? 300);
const HOOK_CONCURRENCY = 10;
const PEER_URL = process.env.PEER_URL?.replace(/\/+$/, '');
const PEER_TOKEN = process.env.PEER_TOKEN;

/** What a case needs of a system under test. */
interface System {
  name: string;
  /** GET of 100 rows. */
  read: { url: string; headers: Record<string, string> };
  /** POST of one row (`marker` goes into its text cell). */
  insertOne(marker: string): { url: string; headers: Record<string, string>; body: string };
  /** POST of these 1,000 rows (text cells). */
  insertMany(texts: string[]): { url: string; headers: Record<string, string>; body: string };
  /** Point one webhook at `url` for inserts. */
  addWebhook(url: string): Promise<void>;
  close(): Promise<void>;
}

async function call(url: string, init: RequestInit & { what: string }): Promise<unknown> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.what}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

async function basegate(): Promise<System> {
  const { startBasegate } = await import('./lib/servers.js');
  const s = await startBasegate({ LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
  const { base, baseToken, accountToken } = s.seeded;
  const rows = `${s.origin}/api-gateway/api/v2/dtables/${base.uuid}/rows/`;
  const headers = { authorization: `Token ${baseToken}`, 'content-type': 'application/json' };
  const seedRows = Array.from({ length: 100 }, (_, i) => ({ Name: `seed ${i}` }));
  await call(rows, { what: 'seed rows', method: 'POST', headers, body: JSON.stringify({ table_name: 'Table1', rows: seedRows }) });
  s.container.dispatcher.start();
  s.container.webhooks.deliverer.start();
  return {
    name: 'basegate',
    read: { url: `${rows}?table_name=Table1&limit=100`, headers: { authorization: headers.authorization } },
    insertOne: (marker) => ({ url: rows, headers, body: JSON.stringify({ table_name: 'Table1', rows: [{ Name: marker }] }) }),
    insertMany: (texts) => ({ url: rows, headers, body: JSON.stringify({ table_name: 'Table1', rows: texts.map((Name) => ({ Name })) }) }),
    addWebhook: async (url) => {
      await call(`${s.origin}/api/v2.1/workspace/${base.workspace_id}/dtable/${encodeURIComponent(base.name)}/webhooks/`, {
        what: 'basegate webhook',
        method: 'POST',
        headers: { authorization: `Token ${accountToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
    },
    close: async () => {
      await s.container.dispatcher.stop();
      await s.container.webhooks.deliverer.stop();
      await s.close();
    },
  };
}

/** NocoDB at PEER_URL through its REST API v2 (`xc-token`): a base and a table of its own. */
async function nocodb(origin: string, token: string): Promise<System> {
  const headers = { 'xc-token': token, 'content-type': 'application/json' };
  const created = (await call(`${origin}/api/v2/meta/bases/`, { what: 'peer base', method: 'POST', headers, body: JSON.stringify({ title: `basegate-compare-${Date.now()}` }) })) as { id: string };
  const table = (await call(`${origin}/api/v2/meta/bases/${created.id}/tables`, {
    what: 'peer table',
    method: 'POST',
    headers,
    body: JSON.stringify({ table_name: 'bench', title: 'bench', columns: [{ column_name: 'title', title: 'Title', uidt: 'SingleLineText' }] }),
  })) as { id: string };
  const records = `${origin}/api/v2/tables/${table.id}/records`;
  await call(records, { what: 'seed peer rows', method: 'POST', headers, body: JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ Title: `seed ${i}` }))) });
  return {
    name: 'peer',
    read: { url: `${records}?limit=100`, headers: { 'xc-token': token } },
    insertOne: (marker) => ({ url: records, headers, body: JSON.stringify({ Title: marker }) }),
    insertMany: (texts) => ({ url: records, headers, body: JSON.stringify(texts.map((Title) => ({ Title }))) }),
    addWebhook: async (url) => {
      await call(`${origin}/api/v2/meta/tables/${table.id}/hooks`, {
        what: 'peer webhook',
        method: 'POST',
        headers,
        body: JSON.stringify({
          title: 'basegate compare',
          event: 'after',
          operation: 'insert',
          version: 'v2',
          active: true,
          notification: { type: 'URL', payload: { method: 'POST', path: url, headers: [], parameters: [] } },
        }),
      });
    },
    close: async () => {
      await call(`${origin}/api/v2/meta/bases/${created.id}`, { what: 'drop peer base', method: 'DELETE', headers }).catch(() => undefined);
    },
  };
}

const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const run = promisify(execFile);

/** autocannon in a child process (so it does not share this event loop): req/s, p50, p99, failures. */
async function load(request: { url: string; headers: Record<string, string>; body?: string; method?: string }) {
  const args = ['-j', '-c', String(CONNECTIONS), '-d', String(SECONDS), ...Object.entries(request.headers).flatMap(([k, v]) => ['-H', `${k}=${v}`])];
  if (request.method) args.push('-m', request.method);
  if (request.body !== undefined) args.push('-b', request.body);
  const { stdout } = await run(process.execPath, [autocannonBin, ...args, request.url], { maxBuffer: 16 * 1024 * 1024 });
  const out = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, failed: out.non2xx + out.errors };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

interface Receiver {
  port: number;
  received(): Promise<Map<string, number>>;
  child: ChildProcess;
}

async function startReceiver(): Promise<Receiver> {
  const child = fork(fileURLToPath(import.meta.url), ['receiver'], { execArgv: process.execArgv, stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const received = () =>
    new Promise<Map<string, number>>((resolve) => {
      child.once('message', (m: { received: Array<[string, number]> }) => resolve(new Map(m.received)));
      child.send({ cmd: 'received' });
    });
  return { port, received, child };
}

async function bulk(system: System): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i <= BULK_ITERATIONS; i++) {
    const request = system.insertMany(Array.from({ length: 1000 }, (_, j) => `bulk ${i} ${j}`));
    const t0 = performance.now();
    await call(request.url, { what: `${system.name} bulk insert`, method: 'POST', headers: request.headers, body: request.body });
    if (i > 0) times.push(performance.now() - t0); // the first one warms up
  }
  return median(times);
}

let markerRun = 0;

async function webhookLatency(system: System, receiver: Receiver): Promise<{ p50: number; p99: number; arrived: number }> {
  const runId = ++markerRun;
  await system.addWebhook(`http://127.0.0.1:${receiver.port}/${system.name}`);
  const answeredAt = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: HOOK_CONCURRENCY }, async () => {
      while (next < HOOK_INSERTS) {
        const marker = `cp-${runId}-${next++}`;
        const request = system.insertOne(marker);
        await call(request.url, { what: `${system.name} insert`, method: 'POST', headers: request.headers, body: request.body });
        answeredAt.set(marker, Date.now());
      }
    }),
  );
  const deadline = Date.now() + 60_000;
  let received = await receiver.received();
  const mine = () => [...answeredAt.keys()].filter((m) => received.has(m)).length;
  while (mine() < HOOK_INSERTS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    received = await receiver.received();
  }
  const latency = [...answeredAt].filter(([m]) => received.has(m)).map(([m, t]) => received.get(m)! - t).sort((a, b) => a - b);
  return { p50: percentile(latency, 0.5), p99: percentile(latency, 0.99), arrived: latency.length };
}

async function main(): Promise<void> {
  const systems: System[] = [await basegate()];
  if (PEER_URL && PEER_TOKEN) systems.push(await nocodb(PEER_URL, PEER_TOKEN));
  else console.log('No PEER_URL and PEER_TOKEN: measuring basegate alone.');
  const receiver = await startReceiver();
  try {
    const reads: Record<string, Array<Awaited<ReturnType<typeof load>>>> = {};
    const inserts: Record<string, Array<Awaited<ReturnType<typeof load>>>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const system of systems) {
        (reads[system.name] ??= []).push(await load(system.read));
        const one = system.insertOne(`load-${round}`);
        (inserts[system.name] ??= []).push(await load({ ...one, method: 'POST' }));
      }
    }
    const bulkMs: Record<string, number> = {};
    for (const system of systems) bulkMs[system.name] = await bulk(system);
    const hooks: Record<string, { p50: number; p99: number; arrived: number } | string> = {};
    for (const system of systems) {
      try {
        hooks[system.name] = await webhookLatency(system, receiver);
      } catch (error) {
        hooks[system.name] = (error as Error).message;
      }
    }

    const med = (xs: Array<{ rps: number; p50: number; p99: number; failed: number }>) => ({
      rps: median(xs.map((x) => x.rps)),
      p99: median(xs.map((x) => x.p99)),
      failed: xs.reduce((sum, x) => sum + x.failed, 0),
    });
    const names = systems.map((s) => s.name);
    const cell = (text: string) => text.padStart(26);
    console.log(`\n${ROUNDS} rounds x ${SECONDS} s at ${CONNECTIONS} connections (medians); bulk: median of ${BULK_ITERATIONS}; webhook: ${HOOK_INSERTS} inserts at ${HOOK_CONCURRENCY} concurrency`);
    console.log(`${'case'.padEnd(30)}${names.map(cell).join('')}${names.length > 1 ? cell('basegate / peer') : ''}`);
    const line = (label: string, values: Record<string, number>, unit: string, format: (n: number) => string, higherIsBetter: boolean) => {
      const ratio = names.length > 1 ? values.basegate! / values.peer! : NaN;
      const shown = Number.isFinite(ratio) ? `${(higherIsBetter ? ratio : 1 / ratio).toFixed(1)}x ${higherIsBetter ? 'more' : 'faster'}` : '';
      console.log(`${label.padEnd(30)}${names.map((n) => cell(`${format(values[n]!)} ${unit}`)).join('')}${names.length > 1 ? cell(shown) : ''}`);
    };
    const readMed = Object.fromEntries(names.map((n) => [n, med(reads[n]!)]));
    const insertMed = Object.fromEntries(names.map((n) => [n, med(inserts[n]!)]));
    line('read 100 rows', Object.fromEntries(names.map((n) => [n, readMed[n]!.rps])), 'req/s', (x) => x.toFixed(0), true);
    line('read 100 rows p99', Object.fromEntries(names.map((n) => [n, readMed[n]!.p99])), 'ms', (x) => x.toFixed(0), false);
    line('single insert', Object.fromEntries(names.map((n) => [n, insertMed[n]!.rps])), 'req/s', (x) => x.toFixed(0), true);
    line('single insert p99', Object.fromEntries(names.map((n) => [n, insertMed[n]!.p99])), 'ms', (x) => x.toFixed(0), false);
    line('1,000-row insert', bulkMs, 'ms', (x) => x.toFixed(1), false);
    for (const n of names) {
      const h = hooks[n]!;
      if (typeof h === 'string') console.log(`webhook (${n}): not measured: ${h}`);
    }
    const measured = names.filter((n) => typeof hooks[n] !== 'string');
    if (measured.length > 0) {
      const p = (k: 'p50' | 'p99') => Object.fromEntries(measured.map((n) => [n, (hooks[n] as { p50: number; p99: number })[k]]));
      const hookNames = names;
      if (measured.length === hookNames.length) {
        line('webhook insert → receipt p50', p('p50'), 'ms', (x) => x.toFixed(0), false);
        line('webhook insert → receipt p99', p('p99'), 'ms', (x) => x.toFixed(0), false);
      } else for (const n of measured) console.log(`webhook (${n}): p50 ${p('p50')[n]} ms, p99 ${p('p99')[n]} ms`);
      for (const n of measured) {
        const h = hooks[n] as { arrived: number };
        if (h.arrived < HOOK_INSERTS) console.log(`webhook (${n}): only ${h.arrived}/${HOOK_INSERTS} deliveries arrived within 60 s`);
      }
    }
    const failures = names.map((n) => readMed[n]!.failed + insertMed[n]!.failed);
    if (failures.some((f) => f > 0)) console.log(`non-2xx answers or errors under load: ${names.map((n, i) => `${n} ${failures[i]}`).join(', ')} (those figures measure failures)`);
  } finally {
    receiver.child.send({ cmd: 'stop' });
    for (const system of systems) await system.close();
  }
}

// ---- receiver (child process): receipt time of every delivery, by the marker in its body ----
if (process.argv[2] === 'receiver') {
  const received = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const time = Date.now();
      for (const match of Buffer.concat(chunks).toString('utf8').matchAll(/cp-\d+-\d+/g)) if (!received.has(match[0])) received.set(match[0], time);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (message: { cmd: string }) => {
    if (message.cmd === 'received') process.send!({ received: [...received] });
    if (message.cmd === 'stop') server.close(() => process.exit(0));
  });
} else {
  await main();
}
