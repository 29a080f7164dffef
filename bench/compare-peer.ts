/**
 * basegate beside a peer (NocoDB, REST API v2) on the same machine, the same cases, side by side:
 *   - read: `GET` 100 rows (autocannon, BENCH_CONNECTIONS connections, BENCH_SECONDS s, BENCH_ROUNDS rounds)
 *   - single insert: `POST` one row (autocannon, same settings)
 *   - bulk insert: 1,000 rows (median of BENCH_BULK_ITERATIONS), in one call where the system takes it
 *   - webhook latency: BENCH_HOOK_INSERTS single-row inserts paced at BENCH_HOOK_RATE (10) per second on
 *     both systems (at most 10 in flight), one webhook to a local receiver (a child process answering at
 *     once): p50/p99 from the insert's response to receipt
 *   - uncached reads (what a user meets, not the page cache): on a table of BENCH_TABLE_ROWS rows
 *     (20,000) of its own, every request another 100-row page (`start`/`offset`) or another threshold of
 *     a filter matching 1% of the rows, BENCH_CONNECTIONS concurrent clients for BENCH_SECONDS s
 * The inserts go to a table of their own ("Inserts"), so the tables the reads read do not grow.
 * For the load cases it also prints each server's CPU time per request (from /proc, the server process
 * alone: steadier than req/s on a shared machine), and each server's resident memory at the end.
 *
 *   npx tsx bench/compare-peer.ts                                   # basegate alone
 *   PEER_URL=http://127.0.0.1:8080 PEER_TOKEN=<xc-token> npx tsx bench/compare-peer.ts
 *
 * Not run by CI. basegate runs as `npm start` runs it: `node bin/basegate.js serve` in a process of its
 * own (built first when stale), SQLite under a fresh DATA_DIR or BENCH_DATABASE_URL, request logging
 * off (LOG_LEVEL=warn) and rate limits off, as the peer has none by default. The peer is whatever runs
 * at PEER_URL (a local NocoDB started with NC_ALLOW_LOCAL_HOOKS=true: the script creates a base, a
 * table and a webhook there with the API token, and deletes the base at the end); its process is found
 * by its port (or PEER_PID) for the CPU and memory figures. See bench/README.md.
 */
import { execFile, execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median } from './lib/harness.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BULK_ITERATIONS = Number(process.env.BENCH_BULK_ITERATIONS ?? 5);
const HOOK_INSERTS = Number(process.env.BENCH_HOOK_INSERTS ?? 300);
const HOOK_CONCURRENCY = 10;
/**
 * Inserts per second of the webhook case, the same for both systems (a delivery's latency depends on the
 * rate: a system driven as fast as it answers queues its own deliveries). 0: as fast as each answers.
 */
const HOOK_RATE = Number(process.env.BENCH_HOOK_RATE ?? 10);
const READ_ROWS = 100;
/** Rows of the table the uncached reads read. */
const TABLE_ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 20_000);
const PEER_URL = process.env.PEER_URL?.replace(/\/+$/, '');
const PEER_TOKEN = process.env.PEER_TOKEN;

/** What a case needs of a system under test. */
interface System {
  name: string;
  version: string;
  /** The server's process (for CPU time and memory), when known. */
  pid: number | null;
  /** GET of 100 rows. */
  read: { url: string; headers: Record<string, string> };
  /** The rows in an answer to `read`. */
  rowsOf(answer: unknown): unknown[] | undefined;
  /** GET of the 100 rows from `start` of the big table (uncached: each request another start). */
  page(start: number): { url: string; headers: Record<string, string> };
  /** 100 rows of the big table with `from <= N < to` (a filter; each request other thresholds). */
  filtered(from: number, to: number): { url: string; headers: Record<string, string>; body?: string; method?: string };
  /** POST of one row to the insert table (`marker` goes into its text cell). */
  insertOne(marker: string): { url: string; headers: Record<string, string>; body: string };
  /** POST of these rows to the insert table (text cells). */
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

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** CPU ms (user + system) used so far by process `pid` (Linux /proc, clock ticks of 10 ms). */
function cpuMs(pid: number | null): number {
  if (pid === null) return NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function rssMb(pid: number | null): number {
  if (pid === null) return NaN;
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The process listening on `port` of 127.0.0.1 (via `ss`), or null. */
function pidOnPort(port: number): number | null {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const pid = /pid=(\d+)/.exec(out)?.[1];
    return pid ? Number(pid) : null;
  } catch {
    return null;
  }
}

/** basegate as `npm start` runs it, in a process of its own, seeded over its HTTP API. */
async function basegate(): Promise<System> {
  execFileSync(process.execPath, ['-e', "import('./scripts/build.mjs').then((m) => m.ensureBuilt())"], { cwd: ROOT, stdio: 'inherit' });
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const admin = { email: 'compare@example.com', password: 'compare-password-123' };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-compare-')),
    SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789',
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_BASE_PER_MINUTE: '0',
    RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
  };
  delete env.DATABASE_URL;
  if (process.env.BENCH_DATABASE_URL) env.DATABASE_URL = process.env.BENCH_DATABASE_URL;
  const child = spawn(process.execPath, ['bin/basegate.js', 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`basegate exited with ${child.exitCode}`);
    const up = await fetch(`${origin}/ping/`).then((r) => r.ok, () => false);
    if (up) break;
    if (i > 1200) throw new Error('basegate did not answer within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const json = { 'content-type': 'application/json' };
  const { token: accountToken } = (await call(`${origin}/api2/auth-token/`, { what: 'login', method: 'POST', headers: json, body: JSON.stringify({ username: admin.email, password: admin.password }) })) as { token: string };
  const account = { authorization: `Token ${accountToken}`, ...json };
  const name = `compare-${Date.now()}`;
  const { table: base } = (await call(`${origin}/api/v2.1/dtables/`, { what: 'create base', method: 'POST', headers: account, body: JSON.stringify({ name }) })) as { table: { uuid: string; workspace_id: number } };
  const baseUrl = `${origin}/api/v2.1/workspace/${base.workspace_id}/dtable/${encodeURIComponent(name)}`;
  const { api_token: apiToken } = (await call(`${baseUrl}/api-tokens/`, { what: 'create API-Token', method: 'POST', headers: account, body: JSON.stringify({ app_name: 'compare', permission: 'rw' }) })) as { api_token: string };
  const { access_token: baseToken } = (await call(`${origin}/api/v2.1/dtable/app-access-token/`, { what: 'exchange API-Token', headers: { authorization: `Token ${apiToken}` } })) as { access_token: string };
  const rows = `${origin}/api-gateway/api/v2/dtables/${base.uuid}/rows/`;
  const headers = { authorization: `Token ${baseToken}`, ...json };
  const seedRows = Array.from({ length: READ_ROWS }, (_, i) => ({ Name: `seed ${i}` }));
  await call(rows, { what: 'seed rows', method: 'POST', headers, body: JSON.stringify({ table_name: 'Table1', rows: seedRows }) });
  const gatewayUrl = `${origin}/api-gateway/api/v2/dtables/${base.uuid}`;
  for (const [table, columns] of [
    ['Big', [{ column_name: 'Name', column_type: 'text' }, { column_name: 'N', column_type: 'number' }]],
    ['Inserts', [{ column_name: 'Name', column_type: 'text' }]],
  ] as const) {
    await call(`${gatewayUrl}/tables/`, { what: `create table ${table}`, method: 'POST', headers, body: JSON.stringify({ table_name: table, columns }) });
  }
  for (let i = 0; i < TABLE_ROWS; i += 1000) {
    const part = bigRows(i, Math.min(1000, TABLE_ROWS - i)).map(({ title, n }) => ({ Name: title, N: n }));
    await call(rows, { what: 'seed big table', method: 'POST', headers, body: JSON.stringify({ table_name: 'Big', rows: part }) });
  }
  return {
    name: 'basegate',
    version: `${(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version} (compiled, Node ${process.version})`,
    pid: child.pid ?? null,
    read: { url: `${rows}?table_name=Table1&limit=${READ_ROWS}`, headers: { authorization: headers.authorization } },
    rowsOf: (answer) => (answer as { rows?: unknown[] }).rows,
    page: (start) => ({ url: `${rows}?table_name=Big&convert_keys=true&start=${start}&limit=${READ_ROWS}`, headers: { authorization: headers.authorization } }),
    filtered: (from, to) => ({
      url: `${gatewayUrl}/filtered-rows/?table_name=Big&convert_keys=true&limit=${READ_ROWS}`,
      headers,
      method: 'POST',
      body: JSON.stringify({
        filters: [
          { column_name: 'N', filter_predicate: 'greater_or_equal', filter_term: from },
          { column_name: 'N', filter_predicate: 'less', filter_term: to },
        ],
        filter_conjunction: 'And',
      }),
    }),
    insertOne: (marker) => ({ url: rows, headers, body: JSON.stringify({ table_name: 'Inserts', rows: [{ Name: marker }] }) }),
    insertMany: (texts) => ({ url: rows, headers, body: JSON.stringify({ table_name: 'Inserts', rows: texts.map((Name) => ({ Name })) }) }),
    addWebhook: async (url) => {
      await call(`${baseUrl}/webhooks/`, { what: 'basegate webhook', method: 'POST', headers: account, body: JSON.stringify({ url }) });
    },
    close: async () => {
      child.kill('SIGTERM');
      await exited;
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
  await call(records, { what: 'seed peer rows', method: 'POST', headers, body: JSON.stringify(Array.from({ length: READ_ROWS }, (_, i) => ({ Title: `seed ${i}` }))) });
  const newTable = async (name: string, columns: object[]) =>
    (await call(`${origin}/api/v2/meta/bases/${created.id}/tables`, { what: `peer table ${name}`, method: 'POST', headers, body: JSON.stringify({ table_name: name, title: name, columns }) })) as { id: string };
  const big = await newTable('big', [
    { column_name: 'title', title: 'Title', uidt: 'SingleLineText' },
    { column_name: 'n', title: 'N', uidt: 'Number' },
  ]);
  const inserts = await newTable('inserts', [{ column_name: 'title', title: 'Title', uidt: 'SingleLineText' }]);
  const bigRecords = `${origin}/api/v2/tables/${big.id}/records`;
  const insertRecords = `${origin}/api/v2/tables/${inserts.id}/records`;
  // NocoDB takes at most 100 rows per call with an API token (NC_DATA_PAYLOAD_LIMIT).
  for (let i = 0; i < TABLE_ROWS; i += 100) {
    const part = bigRows(i, Math.min(100, TABLE_ROWS - i)).map(({ title, n }) => ({ Title: title, N: n }));
    await call(bigRecords, { what: 'seed peer big table', method: 'POST', headers, body: JSON.stringify(part) });
  }
  const { currentVersion } = ((await call(`${origin}/api/v1/version`, { what: 'peer version', headers }).catch(() => ({}))) ?? {}) as { currentVersion?: string };
  return {
    name: 'peer',
    version: `NocoDB ${currentVersion ?? '(version unknown)'}`,
    pid: process.env.PEER_PID ? Number(process.env.PEER_PID) : pidOnPort(Number(new URL(origin).port || 80)),
    read: { url: `${records}?limit=${READ_ROWS}`, headers: { 'xc-token': token } },
    rowsOf: (answer) => (answer as { list?: unknown[] }).list,
    page: (start) => ({ url: `${bigRecords}?offset=${start}&limit=${READ_ROWS}`, headers: { 'xc-token': token } }),
    filtered: (from, to) => ({ url: `${bigRecords}?limit=${READ_ROWS}&where=${encodeURIComponent(`(N,gte,${from})~and(N,lt,${to})`)}`, headers: { 'xc-token': token } }),
    insertOne: (marker) => ({ url: insertRecords, headers, body: JSON.stringify({ Title: marker }) }),
    insertMany: (texts) => ({ url: insertRecords, headers, body: JSON.stringify(texts.map((Title) => ({ Title }))) }),
    addWebhook: async (url) => {
      await call(`${origin}/api/v2/meta/tables/${inserts.id}/hooks`, {
        what: 'peer webhook',
        method: 'POST',
        headers,
        body: JSON.stringify({
          title: 'basegate compare',
          // NocoDB 0.301 takes only v3 hooks ("hook version is deprecated" for v2), whose operation is a
          // list; without a body template it POSTs an empty body, so the event is asked for as its UI does.
          // The peer must run with NC_ALLOW_LOCAL_HOOKS=true, or it refuses to send to 127.0.0.1.
          event: 'after',
          operation: ['insert'],
          version: 'v3',
          active: true,
          notification: { type: 'URL', payload: { method: 'POST', path: url, body: '{{ json event }}', headers: [], parameters: [] } },
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

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU µs of the server's process per completed request (NaN when its process is unknown). */
  cpuPerRequest: number;
  /** Requests completed. */
  requests: number;
}

/** autocannon in a child process (so it does not share this event loop): req/s, p50, p99, failures, server CPU. */
async function load(request: { url: string; headers: Record<string, string>; body?: string; method?: string }, pid: number | null, seconds = SECONDS): Promise<LoadResult> {
  const args = ['-j', '-c', String(CONNECTIONS), '-d', String(seconds), ...Object.entries(request.headers).flatMap(([k, v]) => ['-H', `${k}=${v}`])];
  if (request.method) args.push('-m', request.method);
  if (request.body !== undefined) args.push('-b', request.body);
  const cpuBefore = cpuMs(pid);
  const { stdout } = await run(process.execPath, [autocannonBin, ...args, request.url], { maxBuffer: 16 * 1024 * 1024 });
  const cpu = cpuMs(pid) - cpuBefore;
  const out = JSON.parse(stdout) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, failed: out.non2xx + out.errors, cpuPerRequest: (cpu * 1000) / Math.max(1, out.requests.total), requests: out.requests.total };
}

/**
 * Uncached load: BENCH_CONNECTIONS clients in this process, each request built anew by `make(i)` (another
 * page, other thresholds — a URL no cache has answered), for `seconds` s. autocannon repeats one request.
 */
async function variedLoad(make: (i: number) => { url: string; headers: Record<string, string>; body?: string; method?: string }, pid: number | null, seconds = SECONDS): Promise<LoadResult> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const request = make(next++);
        const t0 = performance.now();
        const res = await fetch(request.url, { method: request.method ?? 'GET', headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) }).catch(() => null);
        const text = res ? await res.text() : '';
        if (!res?.ok || (!text.includes('Title') && !text.includes('Name'))) failed++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuMs(pid) - cpuBefore;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), failed, cpuPerRequest: (cpu * 1000) / Math.max(1, latencies.length), requests: latencies.length };
}

/**
 * The uncached requests answer what they claim on this system: a full page of distinct rows at two starts,
 * and a filter's 100 rows all inside its thresholds (a peer that ignored the filter would answer fast and wrong).
 */
async function checkUncached(system: System): Promise<void> {
  const width = FILTER_WIDTH;
  const ask = async (request: { url: string; headers: Record<string, string>; body?: string; method?: string }, what: string) => {
    const answer = await call(request.url, { what: `${system.name} ${what}`, method: request.method ?? 'GET', headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) });
    return (system.rowsOf(answer) ?? []) as Array<Record<string, unknown>>;
  };
  const first = await ask(system.page(0), 'page 0');
  const deep = await ask(system.page(pageStart(1)), `page at ${pageStart(1)}`);
  const titles = new Set([...first, ...deep].map((row) => row.Title ?? row.Name));
  if (first.length !== READ_ROWS || deep.length !== READ_ROWS || titles.size !== 2 * READ_ROWS) throw new Error(`${system.name}: the uncached pages answered ${first.length} and ${deep.length} rows, ${titles.size} distinct`);
  const from = threshold(1);
  const rows = await ask(system.filtered(from, from + width), `filter ${from}…${from + width}`);
  if (rows.length !== Math.min(READ_ROWS, width)) throw new Error(`${system.name}: the filter ${from} <= N < ${from + width} answered ${rows.length} rows`);
  const outside = rows.filter((row) => !(Number(row.N) >= from && Number(row.N) < from + width));
  if (outside.length > 0) throw new Error(`${system.name}: the filter ${from} <= N < ${from + width} answered ${outside.length} rows outside it (N = ${String(outside[0]!.N)})`);
}

/** Rows `from`… of the big table: N a permutation of 0…TABLE_ROWS-1 (a range of width w holds w rows). */
function bigRows(from: number, count: number): Array<{ title: string; n: number }> {
  return Array.from({ length: count }, (_, j) => ({ title: `row ${from + j}`, n: ((from + j) * 7_919) % TABLE_ROWS }));
}

/** Width of the 1% filter's range of N (it matches that many rows). */
const FILTER_WIDTH = Math.max(1, Math.floor(TABLE_ROWS / 100));
/** Distinct page starts (any row, not only multiples of 100) and distinct filter thresholds of the big table. */
const PAGE_STARTS = Math.max(1, TABLE_ROWS - READ_ROWS + 1);
const THRESHOLDS = Math.max(1, TABLE_ROWS - FILTER_WIDTH + 1);

/** A step coprime to `n`, so `k * step % n` visits all of 0…n-1 before it repeats, spread over the table. */
function strideFor(n: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let step = 7_919;
  while (n > 1 && gcd(step, n) !== 1) step++;
  return step;
}
const PAGE_STRIDE = strideFor(PAGE_STARTS);
const THRESHOLD_STRIDE = strideFor(THRESHOLDS);

/** Request k's page start and 1% filter threshold: no value repeats within the first PAGE_STARTS / THRESHOLDS requests. */
const pageStart = (k: number) => (k * PAGE_STRIDE) % PAGE_STARTS;
const threshold = (k: number) => (k * THRESHOLD_STRIDE) % THRESHOLDS;

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

/**
 * Median ms to insert 1,000 rows. One call where the system takes it; NocoDB refuses more than
 * NC_DATA_PAYLOAD_LIMIT (default 100) rows per call with an API token (422 ERR_MAX_PAYLOAD_LIMIT_EXCEEDED),
 * and then the 1,000 rows go in consecutive calls of that many, as an API user has to send them.
 */
async function bulk(system: System): Promise<{ ms: number; calls: number }> {
  const times: number[] = [];
  let chunk = 1000;
  for (let i = 0; i <= BULK_ITERATIONS; i++) {
    const texts = Array.from({ length: 1000 }, (_, j) => `bulk ${i} ${j}`);
    const t0 = performance.now();
    for (let start = 0; start < texts.length; start += chunk) {
      const request = system.insertMany(texts.slice(start, start + chunk));
      const res = await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body });
      const text = await res.text();
      const limit = /ERR_MAX_PAYLOAD_LIMIT_EXCEEDED.*Maximum (\d+) entities/.exec(text);
      if (res.status === 422 && limit && i === 0 && start === 0) {
        chunk = Number(limit[1]);
        start -= chunk; // the same rows again, in calls of the limit
        continue;
      }
      if (!res.ok) throw new Error(`${system.name} bulk insert: ${res.status} ${text.slice(0, 300)}`);
    }
    if (i > 0) times.push(performance.now() - t0); // the first one warms up
  }
  return { ms: median(times), calls: Math.ceil(1000 / chunk) };
}

let markerRun = 0;

async function webhookLatency(system: System, receiver: Receiver): Promise<{ p50: number; p99: number; arrived: number; insertsPerSecond: number }> {
  const runId = ++markerRun;
  await system.addWebhook(`http://127.0.0.1:${receiver.port}/${system.name}`);
  const answeredAt = new Map<string, number>();
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: HOOK_CONCURRENCY }, async () => {
      while (next < HOOK_INSERTS) {
        const index = next++;
        const marker = `cp-${runId}-${index}`;
        if (HOOK_RATE > 0) await new Promise((resolve) => setTimeout(resolve, started + (index * 1000) / HOOK_RATE - Date.now()));
        const request = system.insertOne(marker);
        await call(request.url, { what: `${system.name} insert`, method: 'POST', headers: request.headers, body: request.body });
        answeredAt.set(marker, Date.now());
      }
    }),
  );
  const insertsPerSecond = (HOOK_INSERTS * 1000) / (Date.now() - started);
  const deadline = Date.now() + 60_000;
  let received = await receiver.received();
  const mine = () => [...answeredAt.keys()].filter((m) => received.has(m)).length;
  while (mine() < HOOK_INSERTS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    received = await receiver.received();
  }
  const latency = [...answeredAt].filter(([m]) => received.has(m)).map(([m, t]) => received.get(m)! - t).sort((a, b) => a - b);
  return { p50: percentile(latency, 0.5), p99: percentile(latency, 0.99), arrived: latency.length, insertsPerSecond };
}

async function main(): Promise<void> {
  const systems: System[] = [await basegate()];
  if (PEER_URL && PEER_TOKEN) systems.push(await nocodb(PEER_URL, PEER_TOKEN));
  else console.log('No PEER_URL and PEER_TOKEN: measuring basegate alone.');
  const receiver = await startReceiver();
  try {
    for (const system of systems) {
      const answer = (await call(system.read.url, { what: `${system.name} read`, headers: system.read.headers })) as unknown;
      const count = system.rowsOf(answer)?.length;
      if (count !== READ_ROWS) throw new Error(`${system.name}: the read answered ${count} rows instead of ${READ_ROWS}`);
      await checkUncached(system);
      await load(system.read, system.pid, 1); // warm-up, not counted
      await load({ ...system.insertOne('warm-up'), method: 'POST' }, system.pid, 1);
    }
    const reads: Record<string, LoadResult[]> = {};
    const inserts: Record<string, LoadResult[]> = {};
    const pages: Record<string, LoadResult[]> = {};
    const filters: Record<string, LoadResult[]> = {};
    // Each system walks the same sequence of pages and thresholds, continued from round to round (requests
    // k = 0, 1, 2, … of the whole run), so nothing repeats until a system has sent PAGE_STARTS / THRESHOLDS.
    const sent: Record<string, { pages: number; filters: number }> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const system of systems) {
        const count = (sent[system.name] ??= { pages: 0, filters: 0 });
        (reads[system.name] ??= []).push(await load(system.read, system.pid));
        const pageFrom = count.pages;
        const pageRun = await variedLoad((i) => system.page(pageStart(pageFrom + i)), system.pid);
        count.pages += pageRun.requests;
        (pages[system.name] ??= []).push(pageRun);
        const filterFrom = count.filters;
        const filterRun = await variedLoad((i) => { const t = threshold(filterFrom + i); return system.filtered(t, t + FILTER_WIDTH); }, system.pid);
        count.filters += filterRun.requests;
        (filters[system.name] ??= []).push(filterRun);
        const one = system.insertOne(`load-${round}`);
        (inserts[system.name] ??= []).push(await load({ ...one, method: 'POST' }, system.pid));
      }
    }
    const bulkMs: Record<string, number> = {};
    const bulkCalls: Record<string, number> = {};
    for (const system of systems) {
      const { ms, calls } = await bulk(system);
      bulkMs[system.name] = ms;
      bulkCalls[system.name] = calls;
    }
    const hooks: Record<string, { p50: number; p99: number; arrived: number; insertsPerSecond: number } | string> = {};
    for (const system of systems) {
      try {
        hooks[system.name] = await webhookLatency(system, receiver);
      } catch (error) {
        hooks[system.name] = (error as Error).message;
      }
    }

    const med = (xs: LoadResult[]) => ({
      rps: median(xs.map((x) => x.rps)),
      p99: median(xs.map((x) => x.p99)),
      cpu: median(xs.map((x) => x.cpuPerRequest)),
      failed: xs.reduce((sum, x) => sum + x.failed, 0),
    });
    const names = systems.map((s) => s.name);
    const cell = (text: string) => text.padStart(26);
    console.log(`\n${ROUNDS} rounds x ${SECONDS} s at ${CONNECTIONS} connections (medians); uncached reads on a ${TABLE_ROWS}-row table, inserts into a table of their own; bulk: median of ${BULK_ITERATIONS}; webhook: ${HOOK_INSERTS} inserts at ${HOOK_CONCURRENCY} concurrency${HOOK_RATE > 0 ? `, paced at ${HOOK_RATE}/s` : ''}`);
    console.log(`${'case'.padEnd(30)}${names.map(cell).join('')}${names.length > 1 ? cell('basegate / peer') : ''}`);
    const line = (label: string, values: Record<string, number>, unit: string, format: (n: number) => string, higherIsBetter: boolean) => {
      const ratio = names.length > 1 ? values.basegate! / values.peer! : NaN;
      const better = higherIsBetter ? ratio : 1 / ratio; // > 1: basegate ahead
      const shown = !Number.isFinite(better) ? '' : better >= 1 ? `basegate ${better.toFixed(1)}x ${higherIsBetter ? 'more' : 'less'}` : `peer ${(1 / better).toFixed(1)}x ${higherIsBetter ? 'more' : 'less'}`;
      console.log(`${label.padEnd(30)}${names.map((n) => cell(`${format(values[n]!)} ${unit}`)).join('')}${names.length > 1 ? cell(shown) : ''}`);
    };
    const readMed = Object.fromEntries(names.map((n) => [n, med(reads[n]!)]));
    const insertMed = Object.fromEntries(names.map((n) => [n, med(inserts[n]!)]));
    line('read 100 rows (one URL)', Object.fromEntries(names.map((n) => [n, readMed[n]!.rps])), 'req/s', (x) => x.toFixed(0), true);
    line('read 100 rows (one URL) p99', Object.fromEntries(names.map((n) => [n, readMed[n]!.p99])), 'ms', (x) => x.toFixed(0), false);
    for (const [label, results] of [['uncached page (distinct start)', pages], ['uncached filter 1% (distinct)', filters]] as const) {
      const m = Object.fromEntries(names.map((n) => [n, med(results[n]!)]));
      line(label, Object.fromEntries(names.map((n) => [n, m[n]!.rps])), 'req/s', (x) => x.toFixed(1), true);
      line(`${label} p99`, Object.fromEntries(names.map((n) => [n, m[n]!.p99])), 'ms', (x) => x.toFixed(0), false);
      line(`${label} CPU`, Object.fromEntries(names.map((n) => [n, m[n]!.cpu])), 'µs', (x) => x.toFixed(0), false);
      for (const n of names) if (m[n]!.failed > 0) console.log(`  (${n}: ${m[n]!.failed} failed answers in "${label}")`);
      const distinct = results === pages ? PAGE_STARTS : THRESHOLDS;
      for (const n of names) {
        const total = sent[n]![results === pages ? 'pages' : 'filters'];
        if (total > distinct) console.log(`  (${n}: ${total - distinct} of its ${total} "${label}" requests repeated an earlier one: the table has ${distinct} distinct; raise BENCH_TABLE_ROWS)`);
      }
    }
    line('single insert', Object.fromEntries(names.map((n) => [n, insertMed[n]!.rps])), 'req/s', (x) => x.toFixed(0), true);
    line('single insert p99', Object.fromEntries(names.map((n) => [n, insertMed[n]!.p99])), 'ms', (x) => x.toFixed(0), false);
    line('read: server CPU / request', Object.fromEntries(names.map((n) => [n, readMed[n]!.cpu])), 'µs', (x) => x.toFixed(0), false);
    line('insert: server CPU / request', Object.fromEntries(names.map((n) => [n, insertMed[n]!.cpu])), 'µs', (x) => x.toFixed(0), false);
    line('1,000-row insert', bulkMs, 'ms', (x) => x.toFixed(1), false);
    for (const n of names) if (bulkCalls[n]! > 1) console.log(`  (${n}: the 1,000 rows in ${bulkCalls[n]} consecutive calls of ${1000 / bulkCalls[n]!}, its limit per call with an API token)`);
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
      // The latency depends on the rate the inserts come at: the same pace for both, unless one cannot keep it.
      const rates = measured.map((n) => [n, (hooks[n] as { insertsPerSecond: number }).insertsPerSecond] as const);
      console.log(`  (inserts answered during the webhook case: ${rates.map(([n, r]) => `${n} ${r.toFixed(1)}/s`).join(', ')}${HOOK_RATE > 0 ? `; paced at ${HOOK_RATE}/s` : '; each as fast as it answers'})`);
      for (const [n, r] of rates) if (HOOK_RATE > 0 && r < HOOK_RATE * 0.9) console.log(`webhook (${n}): did not keep the pace of ${HOOK_RATE}/s (${r.toFixed(1)}/s): its figures are not at the same rate`);
      for (const n of measured) {
        const h = hooks[n] as { arrived: number };
        if (h.arrived < HOOK_INSERTS) console.log(`webhook (${n}): only ${h.arrived}/${HOOK_INSERTS} deliveries arrived within 60 s`);
      }
    }
    const failures = names.map((n) => readMed[n]!.failed + insertMed[n]!.failed);
    if (failures.some((f) => f > 0)) console.log(`non-2xx answers or errors under load: ${names.map((n, i) => `${n} ${failures[i]}`).join(', ')} (those figures measure failures)`);
    console.log(`resident memory of the server process after the run: ${systems.map((x) => `${x.name} ${rssMb(x.pid).toFixed(0)} MB`).join(', ')}`);
    console.log(`versions: ${systems.map((x) => `${x.name} ${x.version}`).join(', ')}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
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
