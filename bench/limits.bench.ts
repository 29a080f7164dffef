/**
 * Rate-limiter overhead: a Base-Token-authenticated `/api-gateway/` read (GET the base) with the
 * limiter off, on with the memory store, and on with the Redis store, measured side by side in one
 * run. Three servers (one per variant, each on its own in-memory SQLite) listen in this process;
 * autocannon runs in a child process so the load generator does not share the servers' event loop.
 * Rounds interleave the variants so drift on a shared machine hits all three alike; the change
 * against "off" is computed within each round, and the median over the rounds is reported.
 *
 *   npx tsx bench/limits.bench.ts            # BENCH_ROUNDS=5 BENCH_SECONDS=2 BENCH_CONNECTIONS=10
 *   BENCH_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/limits.bench.ts   # else a redis-server is spawned
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { createContainer, type Container } from '../src/container.js';
import { connect, migrateToLatest } from '../src/db/index.js';
import { freePort } from '../test/http/rate-limit.helpers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const autocannonBin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const run = promisify(execFile);

type Variant = 'off' | 'memory' | 'redis';

interface Server {
  variant: Variant;
  app: FastifyInstance;
  container: Container;
  url: string;
  token: string;
}

async function startServer(variant: Variant, redisUrl: string): Promise<Server> {
  const config = loadConfig(
    {
      SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-bench-')),
      LOG_LEVEL: 'silent',
      // Limiter on: a budget the benchmark never exhausts, so every request is counted and answered 200.
      RATE_LIMIT_BASE_PER_MINUTE: variant === 'off' ? '0' : '10000000',
      RATE_LIMIT_ACCOUNT_PER_MINUTE: variant === 'off' ? '0' : '10000000',
      ...(variant === 'redis' ? { REDIS_URL: redisUrl } : {}),
    },
    { persistSecret: false },
  );
  const container = createContainer(config, { database: connect({ databaseUrl: 'sqlite::memory:', dataDir: config.dataDir }) });
  await migrateToLatest(container.db);
  const app = await buildApp(container, { logger: process.env.BENCH_LOG === '1' });
  await container.accounts.createUser({ email: 'bench@example.com', password: 'password-123' });
  const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bench@example.com', password: 'password-123' } });
  const accountToken = login.json<{ token: string }>().token;
  const auth = { authorization: `Token ${accountToken}` };
  const created = await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers: auth, payload: { name: 'bench' } });
  const base = created.json<{ table: { workspace_id: number; uuid: string } }>().table;
  const access = await app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/access-token/`, headers: auth });
  const token = access.json<{ access_token: string }>().access_token;
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const server = { variant, app, container, url: `${address}/api-gateway/api/v2/dtables/${base.uuid}/`, token };
  const probe = await fetch(server.url, { headers: { authorization: `Token ${token}` } });
  const limited = probe.headers.get('x-ratelimit-limit');
  if (probe.status !== 200 || (variant === 'off') !== (limited === null)) {
    throw new Error(`${variant}: probe answered ${probe.status} ${await probe.text()}, x-ratelimit-limit ${limited}`);
  }
  return server;
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(server: Server, seconds: number): Promise<Result> {
  const { stdout } = await run(
    process.execPath,
    [autocannonBin, '-j', '-c', String(CONNECTIONS), '-d', String(seconds), '-H', `authorization=Token ${server.token}`, server.url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const out = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, non2xx: out.non2xx + out.errors };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  let redisProcess: ChildProcess | null = null;
  let redisUrl = process.env.BENCH_REDIS_URL;
  if (!redisUrl) {
    const port = await freePort();
    redisProcess = await startRedis(port);
    redisUrl = `redis://127.0.0.1:${port}`;
  }
  const servers: Server[] = [];
  try {
    for (const variant of ['off', 'memory', 'redis'] as const) servers.push(await startServer(variant, redisUrl));
    for (const server of servers) await load(server, 1); // warm-up: JIT, connection pools, Redis script cache
    const results = new Map<Variant, Result[]>(servers.map((s) => [s.variant, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) results.get(server.variant)!.push(await load(server, SECONDS));
    }
    const offRounds = results.get('off')!.map((r) => r.rps);
    console.log(`GET /api-gateway/api/v2/dtables/{uuid}/ with a Base-Token, ${CONNECTIONS} connections, ${ROUNDS} rounds x ${SECONDS} s`);
    console.log('variant  req/s (median)  vs off (median of rounds)  p50 ms  p99 ms  non-2xx  rounds (req/s)');
    for (const [variant, rs] of results) {
      const change = median(rs.map((r, i) => (r.rps - offRounds[i]!) / offRounds[i]!));
      console.log(
        [
          variant.padEnd(8),
          median(rs.map((r) => r.rps)).toFixed(0).padStart(14),
          (variant === 'off' ? '' : `${(change * 100).toFixed(1)}%`).padStart(26),
          median(rs.map((r) => r.p50)).toFixed(1).padStart(6),
          median(rs.map((r) => r.p99)).toFixed(1).padStart(6),
          String(rs.reduce((n, r) => n + r.non2xx, 0)).padStart(7),
          ' ' + rs.map((r) => r.rps.toFixed(0)).join(' '),
        ].join('  '),
      );
    }
    // The limiter alone, without HTTP: what one check costs (sequential, so Redis shows its round trip).
    for (const server of servers.filter((s) => s.variant !== 'off')) {
      const n = server.variant === 'memory' ? 200_000 : 5_000;
      const key = { kind: 'base', uuid: '00000000-0000-4000-8000-000000000000' } as const;
      const started = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await server.container.limits.service.check('base', key);
      const micros = Number(process.hrtime.bigint() - started) / 1000 / n;
      console.log(`one limiter check (${server.variant}, sequential): ${micros.toFixed(2)} µs`);
    }
  } finally {
    for (const server of servers) {
      await server.app.close();
      await server.container.close();
    }
    redisProcess?.kill('SIGKILL');
  }
}


function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(child);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
