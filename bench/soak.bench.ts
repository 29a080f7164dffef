/**
 * Memory under steady load (issue 25.7): `basegate serve` compiled (`node bin/basegate.js`, what
 * `npm start` runs) in a process of its own, driven at a steady mixed rate for SOAK_MINUTES; every
 * minute it prints the server's resident memory, V8 heap used and total, and memory outside the heap
 * (external + array buffers), from its own `/metrics`. A leak shows as a rising column; a bounded
 * server levels off after warm-up. Not in `npm test`.
 *
 * Load (per second, SOAK_RATE requests in all, default 40): row appends (1 row), row updates, list of
 * 100 rows, filtered list, whole-base read, SQL SELECT, ping; two live socket.io clients joined to the
 * base receive every change; a webhook receiver in this process takes every delivery.
 *
 *   npx tsx bench/soak.bench.ts            # 30 minutes, SQLite
 *   SOAK_MINUTES=5 SOAK_HEAP_MB=128 BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/soak.bench.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io } from 'socket.io-client';
import { freePort } from './lib/ports.js';
import { benchSchemaUrl } from './lib/databases.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const RATE = Number(process.env.SOAK_RATE ?? 40);
const HEAP_MB = process.env.SOAK_HEAP_MB;
const ADMIN = { email: 'soak@example.com', password: 'soak-password-1' };

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function startServer(env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  const args = [...(HEAP_MB ? [`--max-old-space-size=${HEAP_MB}`] : []), 'bin/basegate.js', 'serve'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-20_000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-20_000)));
  // (LOG_LEVEL=warn hides the listening line: poll the port instead.)
  const url = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
    if (Date.now() > deadline) throw new Error(`no start:\n${output}`);
    if (await fetch(`${url}/health/live/`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.on('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The server's memory figures from its /metrics, in MB. */
async function memory(url: string): Promise<{ rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return {
    rss: value('process_resident_memory_bytes'),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    heapTotal: value('nodejs_heap_size_total_bytes'),
    external: value('nodejs_external_memory_bytes'),
    arrayBuffers: value('nodejs_array_buffers_bytes'),
  };
}

async function main(): Promise<void> {
  const received = { count: 0 };
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.count++;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...rest,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-soak-')),
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_BASE_PER_MINUTE: '0',
    RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
  };
  if (process.env.BENCH_DATABASE_URL) env.DATABASE_URL = await benchSchemaUrl(process.env.BENCH_DATABASE_URL, 'soak');
  const server = await startServer(env);
  const { token } = await json<{ token: string }>(
    await fetch(`${server.url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) }),
  );
  const auth = { authorization: `Token ${token}`, 'content-type': 'application/json' };
  const { table } = await json<{ table: { workspace_id: number; uuid: string } }>(
    await fetch(`${server.url}/api/v2.1/dtables/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'soak' }) }),
  );
  const basePath = `${server.url}/api/v2.1/workspace/${table.workspace_id}/dtable/soak`;
  await json(await fetch(`${basePath}/webhooks/`, { method: 'POST', headers: auth, body: JSON.stringify({ url: hookUrl }) }));
  const { access_token } = await json<{ access_token: string }>(await fetch(`${basePath}/access-token/`, { headers: auth }));
  const gw = `${server.url}/api-gateway/api/v2/dtables/${table.uuid}`;
  const baseAuth = { authorization: `Token ${access_token}`, 'content-type': 'application/json' };
  const live = Array.from({ length: 2 }, () => {
    const socket = io(server.url, { path: '/api-gateway/socket.io', query: { dtable_uuid: table.uuid }, transports: ['websocket'] });
    let changes = 0;
    socket.on('connect', () => socket.emit('join-room', table.uuid, access_token, () => undefined));
    socket.on('update-dtable', () => changes++);
    return { socket, changes: () => changes };
  });

  const rowIds: string[] = [];
  let n = 0;
  const kinds: Array<[string, () => Promise<Response>]> = [
    ['append', () => fetch(`${gw}/rows/`, { method: 'POST', headers: baseAuth, body: JSON.stringify({ table_name: 'Table1', rows: [{ Name: `row ${n++} ${'x'.repeat(200)}` }] }) })],
    ['update', () => {
      const id = rowIds[Math.floor(Math.random() * rowIds.length)];
      return id
        ? fetch(`${gw}/rows/`, { method: 'PUT', headers: baseAuth, body: JSON.stringify({ table_name: 'Table1', updates: [{ row_id: id, row: { Name: `updated ${n++}` } }] }) })
        : fetch(`${server.url}/ping/`);
    }],
    ['list', () => fetch(`${gw}/rows/?table_name=Table1&limit=100`, { headers: baseAuth })],
    ['filter', () => fetch(`${gw}/filtered-rows/?table_name=Table1`, { method: 'POST', headers: baseAuth, body: JSON.stringify({ filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '1' }] }) })],
    ['base', () => fetch(`${gw}/`, { headers: baseAuth })],
    ['sql', () => fetch(`${gw}/sql/`, { method: 'POST', headers: baseAuth, body: JSON.stringify({ sql: 'SELECT Name FROM Table1 LIMIT 50', convert_keys: true }) })],
    ['ping', () => fetch(`${server.url}/ping/`)],
  ];
  const statuses = new Map<string, number>();
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
  let inFlight = 0;
  const tick = setInterval(() => {
    if (inFlight > RATE * 5) return; // the server fell far behind: do not pile up requests in this process
    const [name, kind] = kinds[Math.floor(Math.random() * kinds.length)]!;
    inFlight++;
    kind()
      .then(async (res) => {
        count(res.ok ? String(res.status) : `${name} ${res.status}`);
        const body = await res.text();
        // Rows to update: the ids a listing returned.
        if (res.ok && name === 'list' && rowIds.length < 5000) {
          for (const m of body.matchAll(/"_id":"([^"]+)"/g)) if (!rowIds.includes(m[1]!)) rowIds.push(m[1]!);
        }
      })
      .catch(() => count(`${name} failed`))
      .finally(() => inFlight--);
  }, 1000 / RATE);

  console.log(`soak: ${MINUTES} min at ${RATE} requests/s, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}${HEAP_MB ? `, heap capped at ${HEAP_MB} MB` : ''}`);
  console.log(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? '(unset)'}`);
  // outside MB: resident memory neither in the V8 heap nor in external memory (native allocations: SQLite's
  // page and statement caches, malloc arenas, thread stacks); the column a native leak shows in.
  console.log('minute | RSS MB | heap used MB | heap total MB | external MB | array buffers MB | outside MB | requests (status or failed kind: count) | webhook deliveries | live changes');
  const columns = (m: Awaited<ReturnType<typeof memory>>) =>
    [m.rss, m.heapUsed, m.heapTotal, m.external, m.arrayBuffers, m.rss - m.heapTotal - m.external]
      .map((v, i) => v.toFixed(0).padStart([6, 12, 13, 11, 16, 10][i]!))
      .join(' | ');
  const first = await memory(server.url);
  console.log(`     0 | ${columns(first)} |`);
  for (let minute = 1; minute <= MINUTES; minute++) {
    await new Promise((r) => setTimeout(r, 60_000));
    const m = await memory(server.url);
    const counts = [...statuses].map(([s, c]) => `${s}: ${c}`).join(', ');
    console.log(
      `${String(minute).padStart(6)} | ${columns(m)} | ${counts} | ${received.count} | ${live.map((l) => l.changes()).join('/')}`,
    );
  }
  clearInterval(tick);
  for (const l of live) l.socket.close();
  await server.stop();
  receiver.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
