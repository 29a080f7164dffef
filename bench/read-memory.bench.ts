/**
 * Memory of big reads (issue 34.3): `basegate serve` compiled (`node bin/basegate.js`) in a process of its
 * own, a table of `BENCH_ROWS` rows (100,000; the first 1,000 through the API, the rest generated straight
 * into storage by this process, lib/big-table-data.ts), then:
 *   1. every row read in pages of `BENCH_PAGE` (1,000) with `GET …/rows/?start=…&limit=…`, `BENCH_PASSES` (2) times;
 *   2. the whole-base read `GET …/dtables/{uuid}/` (the body streamed to nowhere);
 *   3. the whole-base export `synchronous-export/export-dtable/` (a zip, streamed to nowhere);
 *   4. the table's CSV export (kept in a temp file);
 *   5. the CSV file of 4 imported as a table of the base (`import-excel-csv-to-table`: streamed upload, two passes, 1,000-row batches);
 *   6. the table's XLSX export (kept in a temp file);
 *   7. that XLSX file imported as a new base (`import-excel-csv-to-base`).
 * BENCH_PASSES=0 skips the paged reads; BENCH_CSV_IMPORT=0 skips 5; BENCH_XLSX=0 skips 6 and 7.
 * The server's resident memory is sampled every 25 ms from /proc (VmRSS), per phase: before, peak, after;
 * and its peak over the whole run (VmHWM). At the end its /metrics read-cache sizes.
 * BENCH_HEAP_SNAPSHOT=N writes a heap snapshot after pass N (`end`: after the exports) and prints the heap after its full collection.
 *
 *   npx tsx bench/read-memory.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/read-memory.bench.ts
 *
 * The server runs as `npm start` runs it: MALLOC_ARENA_MAX=2 unless the environment sets it. Per phase
 * also the server's CPU time, and at its highest RSS the V8 heap, external memory and the rest.
 * BENCH_NODE_ARGS: node's options for the server (`--trace-gc`); BENCH_SERVER_LOG: a file for its output.
 *
 * The aim (issue 34): resident memory under 300 MB throughout.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, openAsBlob, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, setGlobalDispatcher } from 'undici';
import { connect } from '../src/db/index.js';
import { generateRows } from './lib/big-table-data.js';
import { freePort } from './lib/ports.js';
import { benchSchemaUrl } from './lib/databases.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const PAGE = Number(process.env.BENCH_PAGE ?? 1_000);
const PASSES = Number(process.env.BENCH_PASSES ?? 2);
const XLSX = process.env.BENCH_XLSX !== '0';
const CSV_IMPORT = process.env.BENCH_CSV_IMPORT !== '0';
const ADMIN = { email: 'memory@example.com', password: 'memory-password-1' };
const KINDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

/** Reads a response body to its end without keeping it; its size in bytes. */
async function drain(res: Response): Promise<number> {
  if (!res.ok) throw new Error(`${res.status}: ${(await res.text()).slice(0, 300)}`);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}

/** Streams a response body into `file`. */
async function saveTo(res: Response, file: string): Promise<void> {
  if (!res.ok) throw new Error(`${res.status}: ${(await res.text()).slice(0, 300)}`);
  const out = createWriteStream(file);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) if (!out.write(chunk)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The process's CPU time so far (user + system), in seconds, from /proc (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The server's memory as its /metrics tells it, in bytes: V8 heap (total, used; old and large-object spaces), memory outside the heap V8 knows of (external: Buffers, zlib), the read caches. */
interface Inside {
  heapTotal: number;
  heapUsed: number;
  old: number;
  large: number;
  external: number;
  caches: number;
}

async function inside(url: string): Promise<Inside> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (pattern: string) => Number(new RegExp(`^${pattern} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
  const caches = ['snapshot', 'page', 'fragments', 'positions', 'metadata', 'known_metadata'].map((c) => value(`basegate_read_cache_bytes\\{cache="${c}"\\}`)).filter((x) => !Number.isNaN(x)).reduce((a, b) => a + b, 0);
  return {
    heapTotal: value('nodejs_heap_size_total_bytes'),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    old: value('nodejs_heap_space_size_total_bytes\\{space="old"\\}'),
    large: value('nodejs_heap_space_size_total_bytes\\{space="large_object"\\}'),
    external: value('nodejs_external_memory_bytes'),
    caches,
  };
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function describeInside(i: Inside): string {
  return `heap ${mb(i.heapTotal)} MB (used ${mb(i.heapUsed)}; old ${mb(i.old)}, large objects ${mb(i.large)}), external ${mb(i.external)} MB, caches ${mb(i.caches)} MB`;
}

/**
 * Runs `work` while sampling the server's RSS (every 25 ms) and its /metrics (every 250 ms); prints RSS
 * before, peak and after (MB), the work's time, and at the /metrics sample of the highest RSS: the V8
 * heap, external memory, and the rest of RSS (SQLite's page cache, malloc's arenas, code, stacks).
 */
async function phase(pid: number, url: string, name: string, work: () => Promise<string>): Promise<void> {
  const before = status(pid, 'VmRSS');
  let peak = before;
  let atPeak: { rss: number; inside: Inside } | undefined;
  const sampler = setInterval(() => (peak = Math.max(peak, status(pid, 'VmRSS'))), 25);
  let sampling = true;
  const metricsSampler = (async () => {
    while (sampling) {
      const i = await inside(url).catch(() => undefined);
      const rss = status(pid, 'VmRSS');
      if (i && (!atPeak || rss > atPeak.rss)) atPeak = { rss, inside: i };
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const start = Date.now();
  const cpuStart = cpuSeconds(pid);
  let note: string;
  try {
    note = await work();
  } finally {
    clearInterval(sampler);
    sampling = false;
    await metricsSampler;
  }
  const seconds = (Date.now() - start) / 1000;
  const cpu = cpuSeconds(pid) - cpuStart;
  peak = Math.max(peak, status(pid, 'VmRSS'));
  await new Promise((r) => setTimeout(r, 2_000));
  const rest = atPeak ? atPeak.rss - (atPeak.inside.heapTotal + atPeak.inside.external) / 2 ** 20 : NaN;
  console.log(`${name.padEnd(44)} ${seconds.toFixed(1).padStart(6)} s, CPU ${cpu.toFixed(1).padStart(5)} s | RSS before ${before.toFixed(0).padStart(4)} MB, peak ${peak.toFixed(0).padStart(4)} MB, 2 s after ${status(pid, 'VmRSS').toFixed(0).padStart(4)} MB | ${note}`);
  if (atPeak) console.log(`${''.padEnd(52)} at RSS ${atPeak.rss.toFixed(0)} MB: ${describeInside(atPeak.inside)}, rest ${rest.toFixed(0)} MB`);
  console.log(`${''.padEnd(52)} 2 s after: ${describeInside(await inside(url))}`);
}

/** Waits until a `.heapsnapshot` file in `dir` stops growing (at most 5 minutes). */
async function waitForSnapshot(dir: string): Promise<void> {
  const { readdirSync, statSync } = await import('node:fs');
  let last = -1;
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 1_000));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    const size = file ? statSync(path.join(dir, file)).size : -1;
    if (size > 0 && size === last) return;
    last = size;
  }
  throw new Error('no heap snapshot');
}

async function main(): Promise<void> {
  // An import or export of a million rows answers after minutes: no client-side time limit.
  setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0 }));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'basegate-memory-'));
  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = process.env;
  let databaseUrl = `sqlite:${path.join(dataDir, 'basegate.sqlite3')}`;
  if (process.env.BENCH_DATABASE_URL) databaseUrl = await benchSchemaUrl(process.env.BENCH_DATABASE_URL, 'memory');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    // As `npm start` runs the server (package.json), unless the environment sets it.
    MALLOC_ARENA_MAX: '2',
    // Uploads of a million rows' CSV or XLSX pass the default 100 MB file limit.
    ASSET_MAX_BYTES: String(4 * 1024 ** 3),
    ...rest,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    RATE_LIMIT_BASE_PER_MINUTE: '0',
    RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
  };
  // BENCH_HEAP_SNAPSHOT=N: a heap snapshot of the server after pass N (written after a full GC, so the
  // heap figures after it are what is live), into BENCH_HEAP_SNAPSHOT_DIR (the system's temp directory).
  // BENCH_HEAP_SNAPSHOT=end: after the exports.
  const snapshotAtEnd = process.env.BENCH_HEAP_SNAPSHOT === 'end';
  const snapshotPass = snapshotAtEnd ? 0 : Number(process.env.BENCH_HEAP_SNAPSHOT ?? 0);
  const snapshotDir = snapshotPass > 0 || snapshotAtEnd ? mkdtempSync(path.join(process.env.BENCH_HEAP_SNAPSHOT_DIR ?? tmpdir(), 'basegate-heap-')) : undefined;
  // BENCH_NODE_ARGS: node's and V8's options for the server (e.g. `--trace-gc`); BENCH_SERVER_LOG: a file for its whole output.
  const nodeArgs = [...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const serverLog = process.env.BENCH_SERVER_LOG ? createWriteStream(process.env.BENCH_SERVER_LOG) : undefined;
  const child = spawn(process.execPath, [...nodeArgs, 'bin/basegate.js', 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-20_000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-20_000)));
  if (serverLog) for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => serverLog.write(d));
  const url = `http://127.0.0.1:${port}`;
  try {
    for (const deadline = Date.now() + 180_000; ; ) {
      if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`no start:\n${output}`);
      if (await fetch(`${url}/health/live/`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const pid = child.pid!;
    const { token } = await json<{ token: string }>(
      await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) }),
    );
    const auth = { authorization: `Token ${token}`, 'content-type': 'application/json' };
    const { table: base } = await json<{ table: { workspace_id: number; uuid: string; name: string } }>(
      await fetch(`${url}/api/v2.1/dtables/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'memory' }) }),
    );
    const basePath = `${url}/api/v2.1/workspace/${base.workspace_id}/dtable/memory`;
    const { access_token } = await json<{ access_token: string }>(await fetch(`${basePath}/access-token/`, { headers: auth }));
    const gw = `${url}/api-gateway/api/v2/dtables/${base.uuid}`;
    const baseAuth = { authorization: `Token ${access_token}`, 'content-type': 'application/json' };

    // The table: the first 1,000 rows through the API (cells as users write them), the rest generated.
    const created = await json<{ _id: string; columns: Array<{ key: string; name: string }> }>(
      await fetch(`${gw}/tables/`, {
        method: 'POST',
        headers: baseAuth,
        body: JSON.stringify({
          table_name: 'Big',
          columns: [
            { column_name: 'Title', column_type: 'text' },
            { column_name: 'Amount', column_type: 'number' },
            { column_name: 'Kind', column_type: 'single-select', column_data: { options: KINDS.map((name, i) => ({ name, id: `k00${i}`, color: '#FFFFFF' })) } },
            { column_name: 'Notes', column_type: 'long-text' },
          ],
        }),
      }),
    );
    const row = (n: number) => ({ Title: `row ${n}`, Amount: (n * 7_919) % ROWS, Kind: KINDS[n % KINDS.length], Notes: `note ${n} ${'lorem ipsum '.repeat(8)}` });
    await json(await fetch(`${gw}/rows/`, { method: 'POST', headers: baseAuth, body: JSON.stringify({ table_name: 'Big', rows: Array.from({ length: Math.min(1000, ROWS) }, (_, n) => row(n)) }) }));
    const keys = Object.fromEntries(created.columns.map((c) => [c.name, c.key]));
    const handle = connect({ databaseUrl, dataDir });
    const baseId = Number((await handle.db.selectFrom('bases').select('id').where('uuid', '=', base.uuid).executeTakeFirstOrThrow()).id);
    const seedStart = Date.now();
    await generateRows(handle.db, handle.dialect, { baseId, tableId: created._id, from: Math.min(1000, ROWS), to: ROWS }, (n) =>
      Object.fromEntries(Object.entries(row(n)).map(([name, value]) => [keys[name]!, value])),
    );
    // A committed write through the server, so its caches see the generated rows (a new revision).
    await json(await fetch(`${gw}/rows/`, { method: 'POST', headers: baseAuth, body: JSON.stringify({ table_name: 'Big', rows: [row(ROWS)] }) }));
    await handle.db.destroy();
    console.log(
      `${handle.dialect}: ${ROWS + 1} rows in 1 table (seeded in ${((Date.now() - seedStart) / 1000).toFixed(0)} s); pages of ${PAGE}; server pid ${pid}; MALLOC_ARENA_MAX ${env.MALLOC_ARENA_MAX ?? '(unset)'}; NODE_OPTIONS ${env.NODE_OPTIONS ?? '(unset)'}; node arguments ${nodeArgs.join(' ') || '(none)'}; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    );
    const ready = await inside(url);
    console.log(`before the reads: RSS ${status(pid, 'VmRSS').toFixed(0)} MB: ${describeInside(ready)}, rest ${(status(pid, 'VmRSS') - (ready.heapTotal + ready.external) / 2 ** 20).toFixed(0)} MB`);

    const total = ROWS + 1;
    for (let pass = 1; pass <= PASSES; pass++) {
      await phase(pid, url, `read all rows in pages of ${PAGE} (pass ${pass})`, async () => {
        let bytes = 0;
        let rows = 0;
        for (let start = 0; start < total; start += PAGE) {
          const body = await json<{ rows: unknown[] }>(await fetch(`${gw}/rows/?table_name=Big&start=${start}&limit=${PAGE}`, { headers: baseAuth }));
          rows += body.rows.length;
          bytes += JSON.stringify(body).length;
        }
        if (rows !== total) throw new Error(`read ${rows} rows of ${total}`);
        return `${rows} rows, ${(bytes / 2 ** 20).toFixed(0)} MB of JSON`;
      });
      if (snapshotDir && pass === snapshotPass) {
        child.kill('SIGUSR2');
        await waitForSnapshot(snapshotDir);
        console.log(`heap snapshot in ${snapshotDir}; after its full GC: ${describeInside(await inside(url))}`);
      }
    }
    await phase(pid, url, 'whole-base read GET /dtables/{uuid}/', async () => `${((await drain(await fetch(`${gw}/`, { headers: baseAuth }))) / 2 ** 20).toFixed(0)} MB body`);
    await phase(pid, url, 'whole-base export (export-dtable)', async () => {
      const res = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/synchronous-export/export-dtable/?dtable_name=memory&ignore_asset=true`, { headers: auth });
      return `${((await drain(res)) / 2 ** 20).toFixed(0)} MB zip`;
    });
    const csvFile = path.join(dataDir, 'imported.csv');
    await phase(pid, url, 'table CSV export', async () => {
      const res = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/synchronous-export/export-table-to-excel/?dtable_name=memory&table_name=Big&format=csv`, { headers: auth });
      await saveTo(res, csvFile);
      return `${(statSync(csvFile).size / 2 ** 20).toFixed(0)} MB CSV`;
    });
    /** The rows of the base `uuid` in the database, or of its table `tableName` (counted there, not taken from an answer). */
    const countRows = async (uuid: string, tableName?: string) => {
      const check = connect({ databaseUrl, dataDir });
      try {
        let query = check.db
          .selectFrom('base_rows')
          .innerJoin('bases', 'bases.id', 'base_rows.base_id')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('bases.uuid', '=', uuid);
        if (tableName) {
          const { metadata } = await json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>(await fetch(`${gw}/metadata/`, { headers: baseAuth }));
          const table = metadata.tables.find((t) => t.name === tableName);
          if (!table) throw new Error(`no table ${tableName}`);
          query = query.where('base_rows.table_id', '=', table._id);
        }
        return Number((await query.executeTakeFirstOrThrow()).n);
      } finally {
        await check.db.destroy();
      }
    };
    if (CSV_IMPORT) {
      await phase(pid, url, 'CSV import as a table', async () => {
        const form = new FormData();
        form.append('dtable_uuid', base.uuid);
        form.append('file', await openAsBlob(csvFile), 'imported.csv');
        const res = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/synchronous-import/import-excel-csv-to-table/`, { method: 'POST', headers: { authorization: auth.authorization }, body: form });
        await json(res);
        const counted = await countRows(base.uuid, 'imported');
        if (counted !== total) throw new Error(`the import wrote ${counted} rows of ${total}`);
        return `${(statSync(csvFile).size / 2 ** 20).toFixed(0)} MB file, ${total} rows imported`;
      });
    }
    if (XLSX) {
      const file = path.join(dataDir, 'export.xlsx');
      await phase(pid, url, 'table XLSX export', async () => {
        const res = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/synchronous-export/export-table-to-excel/?dtable_name=memory&table_name=Big&format=xlsx`, { headers: auth });
        await saveTo(res, file);
        return `${(statSync(file).size / 2 ** 20).toFixed(0)} MB XLSX`;
      });
      await phase(pid, url, 'XLSX import as a new base', async () => {
        const form = new FormData();
        form.append('dtable', await openAsBlob(file), 'imported.xlsx');
        const res = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/synchronous-import/import-excel-csv-to-base/`, { method: 'POST', headers: { authorization: auth.authorization }, body: form });
        const { dtable } = await json<{ dtable: { uuid: string } }>(res);
        const counted = await countRows(dtable.uuid);
        if (counted !== total) throw new Error(`the import wrote ${counted} rows of ${total}`);
        return `${(statSync(file).size / 2 ** 20).toFixed(0)} MB file, ${total} rows imported`;
      });
    }
    if (snapshotDir && snapshotAtEnd) {
      child.kill('SIGUSR2');
      await waitForSnapshot(snapshotDir);
      console.log(`heap snapshot in ${snapshotDir}; after its full GC: ${describeInside(await inside(url))}`);
    }
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const caches = [...metrics.matchAll(/^basegate_read_cache_bytes\{cache="([^"]+)"\} ([0-9.e+]+)/gm)].map((m) => `${m[1]} ${(Number(m[2]) / 2 ** 20).toFixed(1)} MB`);
    console.log(`\nread caches at the end (/metrics): ${caches.join(', ')}`);
    console.log(`server peak RSS over the whole run (VmHWM, seeding included): ${status(pid, 'VmHWM').toFixed(0)} MB; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('close', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
