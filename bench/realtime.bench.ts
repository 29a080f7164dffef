/**
 * The live channel: commit → client receipt latency of `update-dtable` (p50/p99) with 1, 100 and 1,000
 * clients joined to one base while 1,000 rows are written (one row per commit, 4 writers at a time),
 * and the server's memory per idle connection. The server (basegate on SQLite, worker role running)
 * is this process; the clients run in child processes, so their work does not share the server's
 * event loop: up to 20 probe clients, which record latency, in a process of their own (so their
 * receipt time is not the backlog of a process decoding the other clients' million messages), and
 * the other clients, which only count, spread over BENCH_LOAD_PROCESSES processes. Latency is the
 * probe's receipt time minus the change's `op_time` (set in the write's transaction, same machine
 * clock). Ratios are against the 1-client run of the same invocation.
 *
 *   node --expose-gc --import tsx bench/realtime.bench.ts   # BENCH_ROWS=1000 BENCH_CLIENTS=1,100,1000 BENCH_LOAD_PROCESSES=2
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { io } from 'socket.io-client';
import { startBasegate, type RunningBasegate } from './lib/servers.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const CLIENT_COUNTS = (process.env.BENCH_CLIENTS ?? '1,100,1000').split(',').map(Number);
const WRITERS = 4;
const SAMPLE = 20;
const LOAD_PROCESSES = Number(process.env.BENCH_LOAD_PROCESSES ?? 2);

interface ClientsReport {
  latencies: number[];
  complete: number;
}

/**
 * Child: `n` clients join, then report once every client got `expected` messages (or after a timeout).
 * Probes record each message's latency; load clients only count (the message is not parsed).
 */
async function clients(url: string, uuid: string, token: string, n: number, probe: boolean): Promise<void> {
  const latencies: number[] = [];
  const counts = new Array<number>(n).fill(0);
  let expected = Infinity;
  const sockets = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const socket = io(url, { path: '/api-gateway/socket.io', query: { dtable_uuid: uuid }, transports: ['websocket'], reconnection: false, forceNew: true });
      socket.on('update-dtable', (message: string) => {
        counts[i]! += 1;
        if (probe) latencies.push(Date.now() - (JSON.parse(message) as { op_time: number }).op_time);
        if (counts.every((c) => c >= expected)) done();
      });
      return new Promise<typeof socket>((resolve, reject) => {
        socket.on('connect', () =>
          socket.emit('join-room', uuid, token, (ack: { status: boolean }) => (ack.status ? resolve(socket) : reject(new Error('join refused')))),
        );
        socket.on('connect_error', reject);
      });
    }),
  );
  const done = () => {
    process.send!({ latencies, complete: counts.filter((c) => c >= expected).length } satisfies ClientsReport);
    sockets.forEach((s) => s.close());
    setTimeout(() => process.exit(0), 100);
  };
  process.on('message', (message: { expected: number; timeoutMs: number }) => {
    expected = message.expected;
    setTimeout(done, message.timeoutMs).unref();
  });
  process.send!({ joined: n });
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The clients of one run: probes in one child process, the rest in LOAD_PROCESSES others. */
async function withClients<T>(server: RunningBasegate, n: number, work: (children: ReturnType<typeof fork>[]) => Promise<T>): Promise<T> {
  const probes = Math.min(n, SAMPLE);
  const rest = n - probes;
  const processes = rest === 0 ? 0 : Math.min(LOAD_PROCESSES, rest);
  const loads = Array.from({ length: processes }, (_, i) => Math.floor(rest / processes) + (i < rest % processes ? 1 : 0));
  const spawn = (count: number, probe: boolean) =>
    fork(fileURLToPath(import.meta.url), ['clients', server.origin, server.seeded.base.uuid, server.seeded.baseToken, String(count), probe ? 'probe' : 'load'], {
      execArgv: ['--import', 'tsx'],
    });
  const children = [spawn(probes, true), ...loads.map((count) => spawn(count, false))];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve, reject) => {
          child.once('message', () => resolve());
          child.once('exit', (code) => reject(new Error(`clients exited with ${code}`)));
        }),
    ),
  );
  try {
    return await work(children);
  } finally {
    children.forEach((child) => child.kill());
  }
}

async function writeRows(server: RunningBasegate): Promise<void> {
  const url = `/api-gateway/api/v2/dtables/${server.seeded.base.uuid}/rows/`;
  const headers = { authorization: `Token ${server.seeded.baseToken}` };
  let next = 0;
  const writer = async () => {
    while (next < ROWS) {
      const i = next++;
      const res = await server.app.inject({ method: 'POST', url, headers, payload: { table_name: 'Table1', rows: [{ Name: `row ${i}` }] } });
      if (res.statusCode !== 200) throw new Error(`write failed: ${res.body}`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

async function latencyRun(server: RunningBasegate, n: number) {
  return withClients(server, n, async (children) => {
    const reports = Promise.all(children.map((child) => new Promise<ClientsReport>((resolve) => child.once('message', (m) => resolve(m as ClientsReport)))));
    children.forEach((child) => child.send({ expected: ROWS, timeoutMs: 180_000 }));
    const started = Date.now();
    await writeRows(server);
    const writeSeconds = (Date.now() - started) / 1000;
    const results = await reports;
    const latencies = results[0]!.latencies;
    const complete = results.reduce((sum, r) => sum + r.complete, 0);
    return { n, p50: percentile(latencies, 50), p99: percentile(latencies, 99), complete, writeSeconds };
  });
}

async function idleMemory(server: RunningBasegate, n: number): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const measure = async () => {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
    gc?.();
    return process.memoryUsage().heapUsed + process.memoryUsage().external;
  };
  const before = await measure();
  return withClients(server, n, async () => ((await measure()) - before) / n);
}

async function main(): Promise<void> {
  const server = await startBasegate({ LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', REALTIME_MAX_CONNECTIONS_PER_IP: '100000', REALTIME_MAX_CONNECTIONS_PER_USER: '100000' });
  server.container.dispatcher.start();
  try {
    const runs = [];
    for (const n of CLIENT_COUNTS) runs.push(await latencyRun(server, n));
    const baseline = runs[0]!;
    console.log(`\nupdate-dtable latency, commit → receipt, ${ROWS} rows written one per commit by ${WRITERS} writers`);
    console.log('clients | p50 ms | p99 ms | p50 × 1-client | p99 × 1-client | clients with every message | write time s');
    for (const r of runs) {
      const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
      console.log(
        `${String(r.n).padStart(7)} | ${String(r.p50).padStart(6)} | ${String(r.p99).padStart(6)} | ${ratio(r.p50, baseline.p50).padStart(14)} | ${ratio(r.p99, baseline.p99).padStart(14)} | ${`${r.complete}/${r.n}`.padStart(26)} | ${r.writeSeconds.toFixed(2)}`,
      );
    }
    const perConnection = await idleMemory(server, 1000);
    console.log(`\nserver memory per idle joined connection (1000 connections, heap + external): ${(perConnection / 1024).toFixed(1)} KiB`);
  } finally {
    await server.close();
  }
}

if (process.argv[2] === 'clients') {
  const [, , , url, uuid, token, n, role] = process.argv;
  void clients(url!, uuid!, token!, Number(n), role === 'probe');
} else {
  await main();
}
