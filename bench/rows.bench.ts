/**
 * Base data API throughput, both dialects in one run: append 1000 rows in one call, list 1000 rows,
 * update 1000 rows in one call — each beside the same work done with plain Kysely on the same
 * database (the baseline: one multi-row INSERT in a transaction, one SELECT with JSON parsing, 1000 UPDATEs in one
 * transaction). Reports median ms and rows/s per operation and the API/baseline time ratio.
 *
 *   npx tsx bench/rows.bench.ts
 *
 * Knobs: BENCH_ITERATIONS (7), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; a fresh
 * schema is created and dropped), BENCH_DIALECTS (sqlite,postgres).
 */
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Migrator } from 'kysely';
import pg from 'pg';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { createContainer, type Container } from '../src/container.js';
import { connect, type DbHandle, type DialectName } from '../src/db/index.js';
import { migrations } from '../src/db/migrations/index.js';
import { newRowId } from '../src/modules/rows/ids.js';
import { median } from './lib/harness.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 7);
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as DialectName[];
const ROWS = 1000;

interface Setup {
  container: Container;
  origin: string;
  uuid: string;
  baseId: number;
  tableId: string;
  token: string;
  close(): Promise<void>;
}

async function open(dialect: DialectName): Promise<{ handle: DbHandle; schema?: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'basegate-rows-bench-')), 'basegate.sqlite3');
    return { handle: connect({ databaseUrl: `sqlite:${file}`, dataDir: '/nonexistent' }), drop: async () => undefined };
  }
  const schema = `bench_rows_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return {
    handle: connect({ databaseUrl: PG_URL, dataDir: '/nonexistent', pgSchema: schema }),
    schema,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

async function start(dialect: DialectName): Promise<Setup> {
  const { handle, schema, drop } = await open(dialect);
  const config = loadConfig(
    {
      SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-rows-bench-')),
      LOG_LEVEL: 'silent',
      RATE_LIMIT_BASE_PER_MINUTE: '0',
      RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
    },
    { persistSecret: false },
  );
  const container = createContainer(config, { database: handle });
  // The migration tables live in our own schema (other schemas of the database may hold theirs).
  const migrated = await new Migrator({ db: container.db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema }).migrateToLatest();
  if (migrated.error) throw migrated.error;
  const app = await buildApp(container, { logger: false });
  const email = `bench-${randomBytes(3).toString('hex')}@example.com`;
  await container.accounts.createUser({ email, password: 'password-123' });
  const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: email, password: 'password-123' } });
  const headers = { authorization: `Token ${login.json<{ token: string }>().token}` };
  const created = await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers, payload: { name: 'bench' } });
  const base = created.json<{ table: { id: number; uuid: string; workspace_id: number } }>().table;
  const access = await app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/access-token/`, headers });
  const token = access.json<{ access_token: string }>().access_token;
  const table = await app.inject({
    method: 'POST',
    url: `/api-gateway/api/v2/dtables/${base.uuid}/tables/`,
    headers: { authorization: `Token ${token}` },
    payload: {
      table_name: 'Bench',
      columns: [
        { column_name: 'Name', column_type: 'text' },
        { column_name: 'Amount', column_type: 'number' },
        { column_name: 'Done', column_type: 'checkbox' },
        { column_name: 'Due', column_type: 'date' },
        { column_name: 'Tag', column_type: 'single-select', column_data: { options: [{ name: 'a' }, { name: 'b' }] } },
      ],
    },
  });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    container,
    origin,
    uuid: base.uuid,
    baseId: base.id,
    tableId: table.json<{ _id: string }>()._id,
    token,
    close: async () => {
      await app.close();
      await container.close();
      await drop();
    },
  };
}

const rowsByName = (n: number, salt: string) =>
  Array.from({ length: n }, (_, i) => ({ Name: `row ${salt} ${i}`, Amount: i * 1.5, Done: i % 2 === 0, Due: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`, Tag: i % 3 ? 'a' : 'b' }));

async function api(s: Setup, method: 'GET' | 'POST' | 'PUT', suffix: string, body?: unknown): Promise<unknown> {
  const res = await request(`${s.origin}/api-gateway/api/v2/dtables/${s.uuid}/${suffix}`, {
    method,
    headers: { authorization: `Token ${s.token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await res.body.json();
  if (res.statusCode !== 200) throw new Error(`${method} ${suffix}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/** CPU ms of this process (server, client and database engine for SQLite) per timed call, by label. */
const cpuSamples: Record<string, number[]> = {};
let cpuLabel = '';

async function timed(fn: () => Promise<unknown>, label = cpuLabel): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  if (label) (cpuSamples[label] ??= []).push((cpu.user + cpu.system) / 1000);
  return ms;
}

/** What the baseline stores: the same cells keyed by column key. */
async function columnKeys(s: Setup): Promise<string[]> {
  const meta = (await api(s, 'GET', 'metadata/')) as { metadata: { tables: Array<{ name: string; columns: Array<{ key: string }> }> } };
  return meta.metadata.tables.find((t) => t.name === 'Bench')!.columns.map((c) => c.key);
}

async function measure(dialect: DialectName) {
  const s = await start(dialect);
  const db = s.container.db;
  const keys = await columnKeys(s);
  const byKey = (rows: ReturnType<typeof rowsByName>) =>
    rows.map((r) => ({ [keys[0]!]: r.Name, [keys[1]!]: r.Amount, [keys[2]!]: r.Done, [keys[3]!]: r.Due, [keys[4]!]: r.Tag }));
  const samples: Record<string, number[]> = { 'api append': [], 'kysely insert': [], 'api list': [], 'kysely select': [], 'api update': [], 'kysely update': [] };
  const baselineTable = 'BASE';
  const clear = async () => {
    await db.deleteFrom('base_rows').where('base_id', '=', s.baseId).execute();
    await db.deleteFrom('events').execute();
    await db.deleteFrom('event_columns').execute();
  };

  for (let i = 0; i <= ITERATIONS; i++) {
    const keep = i > 0; // the first pass warms up
    await clear();
    // API: append, list, update 1000 rows
    let ids: string[] = [];
    cpuLabel = keep ? `${dialect} api append` : '';
    const append = await timed(async () => {
      const res = (await api(s, 'POST', 'rows/', { table_name: 'Bench', rows: rowsByName(ROWS, `i${i}`) })) as { row_ids: Array<{ _id: string }> };
      ids = res.row_ids.map((r) => r._id);
    });
    cpuLabel = '';
    const list = await timed(async () => {
      const res = (await api(s, 'GET', 'rows/?table_name=Bench&limit=1000&convert_keys=true')) as { rows: unknown[] };
      if (res.rows.length !== ROWS) throw new Error(`listed ${res.rows.length}`);
    });
    const update = await timed(() => api(s, 'PUT', 'rows/', { table_name: 'Bench', updates: ids.map((row_id, j) => ({ row_id, row: { Amount: j * 3, Done: j % 3 === 0 } })) }));

    // Plain Kysely: the same rows into the same table shape (random row ids as the API's), one
    // multi-row INSERT in a transaction; no validation, no events
    const now = Date.now();
    const records = byKey(rowsByName(ROWS, `k${i}`)).map((data) => ({
      base_id: s.baseId,
      table_id: baselineTable,
      row_id: newRowId(),
      data: JSON.stringify(data),
      ctime: now,
      mtime: now,
      creator: 'bench',
      last_modifier: 'bench',
    }));
    const insert = await timed(() => db.transaction().execute((trx) => trx.insertInto('base_rows').values(records).execute()), keep ? `${dialect} kysely insert` : '');
    const select = await timed(async () => {
      const rows = await db.selectFrom('base_rows').selectAll().where('base_id', '=', s.baseId).where('table_id', '=', baselineTable).orderBy('id').limit(ROWS).execute();
      for (const r of rows) if (typeof r.data === 'string') JSON.parse(r.data);
      if (rows.length !== ROWS) throw new Error(`selected ${rows.length}`);
    });
    const updated = await timed(() =>
      db.transaction().execute(async (trx) => {
        for (const [j, r] of records.entries()) {
          const data = { ...JSON.parse(r.data), [keys[1]!]: j * 3, [keys[2]!]: j % 3 === 0 };
          await trx.updateTable('base_rows').set({ data: JSON.stringify(data), mtime: now + 1 }).where('base_id', '=', s.baseId).where('row_id', '=', r.row_id).execute();
        }
      }),
    );
    if (keep) {
      samples['api append']!.push(append);
      samples['api list']!.push(list);
      samples['api update']!.push(update);
      samples['kysely insert']!.push(insert);
      samples['kysely select']!.push(select);
      samples['kysely update']!.push(updated);
    }
  }
  await s.close();
  return samples;
}

function report(dialect: string, samples: Record<string, number[]>) {
  const line = (op: string, apiName: string, baseName: string) => {
    const a = median(samples[apiName]!);
    const b = median(samples[baseName]!);
    const fmt = (ms: number) => `${ms.toFixed(1).padStart(8)} ms ${String(Math.round((ROWS / ms) * 1000)).padStart(8)} rows/s`;
    console.log(`${dialect.padEnd(9)} ${op.padEnd(7)} api ${fmt(a)} | kysely ${fmt(b)} | api/kysely time ${(a / b).toFixed(2)}x`);
  };
  line('append', 'api append', 'kysely insert');
  const cpuApi = median(cpuSamples[`${dialect} api append`] ?? [NaN]);
  const cpuPlain = median(cpuSamples[`${dialect} kysely insert`] ?? [NaN]);
  const time = median(samples['api append']!) / median(samples['kysely insert']!);
  const cpu = cpuApi / cpuPlain;
  const aim = (ratio: number) => `${ratio.toFixed(2)}x (aim within 3x: ${ratio <= 3 ? 'met' : 'MISSED'})`;
  console.log(`${dialect.padEnd(9)} append  CPU of this process: api ${cpuApi.toFixed(1)} ms | kysely ${cpuPlain.toFixed(1)} ms | ratio ${aim(cpu)}`);
  console.log(`${dialect.padEnd(9)} append  aim (issue 18 item 4): wall time ${aim(time)}; CPU ${aim(cpu)}`);
  line('list', 'api list', 'kysely select');
  line('update', 'api update', 'kysely update');
}

const results: Array<[string, Record<string, number[]>]> = [];
for (const dialect of DIALECTS) results.push([dialect, await measure(dialect)]);
console.log(`\n1000 rows per call, median of ${ITERATIONS} (after one warm-up), API over real HTTP on 127.0.0.1`);
for (const [dialect, samples] of results) report(dialect, samples);
