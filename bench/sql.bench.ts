/**
 * SQL endpoint cost: a filtered, ordered `SELECT … LIMIT 1000` over a 100,000-row table, measured
 * three ways side by side in one run on one database:
 *   kysely   — the equivalent query written by hand with Kysely over `base_rows`, rows parsed (the floor);
 *   service  — SqlService.execute (parse, allow-list, compile, run, shape), no HTTP;
 *   endpoint — POST …/sql/ over HTTP on a listening server (auth, rate limit, JSON out).
 * Rounds interleave the three so drift on a shared machine hits all alike; medians are reported, with
 * ratios to `kysely` taken within each round.
 *
 *   npx tsx bench/sql.bench.ts                                                   # SQLite (file in a temp dir)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/sql.bench.ts   # PostgreSQL (own schema, dropped after)
 *   knobs: BENCH_ROWS (100000), BENCH_ROUNDS (7), BENCH_REPEAT (3 queries per target per round)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { createContainer } from '../src/container.js';
import { connect, type Database, type DbHandle, type DialectName } from '../src/db/index.js';
import { migrations } from '../src/db/migrations/index.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;

const CITIES = ['Berlin', 'Munich', 'Hamburg', 'Cologne', 'Paris'];
const QUERY = "SELECT Name, Age, City FROM Contacts WHERE Age >= ? AND City IN ('Berlin', 'Munich') ORDER BY Age DESC, Name LIMIT 1000";
const MIN_AGE = 30;

async function database(): Promise<{ handle: DbHandle; drop(): Promise<void> }> {
  if (!DATABASE_URL) {
    const dir = mkdtempSync(path.join(tmpdir(), 'basegate-sql-bench-'));
    return { handle: connect({ databaseUrl: `sqlite:${path.join(dir, 'bench.sqlite3')}`, dataDir: dir }), drop: async () => {} };
  }
  const schema = `bench_sql_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const handle = connect({ databaseUrl: DATABASE_URL, dataDir: tmpdir(), pgSchema: schema, poolSize: 5 });
  return {
    handle: { ...handle, close: async () => {} },
    async drop() {
      await handle.close();
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/** The migrations, with Kysely's bookkeeping tables pinned to this connection's own schema. */
async function migrate(db: Kysely<Database>, dialect: DialectName): Promise<void> {
  const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : undefined;
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) }).migrateToLatest();
  if (error) throw error;
}

const col = (key: string, name: string, type: string, data: unknown = null) => ({ key, name, type, width: 200, editable: true, resizable: true, draggable: true, data });

async function seed(db: Kysely<Database>, baseId: number): Promise<void> {
  const options = CITIES.map((name, i) => ({ id: String(100000 + i), name, color: '#FFFCB5', textColor: '#202020' }));
  const meta = {
    version: 1,
    format_version: 9,
    settings: {},
    tables: [{ _id: '0000', name: 'Contacts', columns: [col('0000', 'Name', 'text'), col('c001', 'Age', 'number'), col('c002', 'City', 'single-select', { options })], views: [] }],
  };
  await db.updateTable('base_metadata').set({ data: JSON.stringify(meta) }).where('base_id', '=', baseId).execute();
  const now = Date.now();
  for (let start = 0; start < ROWS; start += 2000) {
    const batch = Array.from({ length: Math.min(2000, ROWS - start) }, (_, j) => {
      const i = start + j;
      // Deterministic spread: ages 0–89, five cities, a few empty cells.
      const data: Record<string, unknown> = { '0000': `Person ${String(i).padStart(6, '0')}`, c002: CITIES[(i * 7) % CITIES.length] };
      if (i % 50 !== 0) data.c001 = (i * 37) % 90;
      return { base_id: baseId, table_id: '0000', row_id: `r${String(i).padStart(21, '0')}`, data: JSON.stringify(data), ctime: now, mtime: now, creator: 'bench', last_modifier: 'bench' };
    });
    await db.insertInto('base_rows').values(batch).execute();
  }
}

/** The same query written by hand, as a repository would: JSON access per dialect, bound values. */
async function handWritten(db: Kysely<Database>, dialect: DialectName, baseId: number): Promise<number> {
  const age = dialect === 'postgres' ? sql`(case when jsonb_typeof(data->'c001') = 'number' then (data->>'c001')::float8 end)` : sql`json_extract(data, '$."c001"')`;
  const city = dialect === 'postgres' ? sql`(data->>'c002')` : sql`json_extract(data, '$."c002"')`;
  const name = dialect === 'postgres' ? sql`(data->>'0000') collate "C"` : sql`json_extract(data, '$."0000"')`;
  const rows = await db
    .selectFrom('base_rows')
    .select(['row_id', 'data'])
    .where('base_id', '=', baseId)
    .where('table_id', '=', '0000')
    .where(sql<boolean>`${age} >= ${MIN_AGE}`)
    .where(sql<boolean>`${city} in (${'Berlin'}, ${'Munich'})`)
    .orderBy(sql`${age} desc nulls last`)
    .orderBy(sql`${name} asc nulls first`)
    .orderBy('id')
    .limit(1000)
    .execute();
  const shaped = rows.map((r) => {
    const data = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>;
    return { _id: r.row_id, Name: data['0000'], Age: data.c001, City: data.c002 };
  });
  return shaped.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { handle, drop } = await database();
  const config = loadConfig(
    { SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-bench-')), LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' },
    { persistSecret: false },
  );
  const container = createContainer(config, { database: handle });
  try {
    await migrate(container.db, container.dialect);
    const app = await buildApp(container, { logger: false });
    await container.accounts.createUser({ email: 'bench@example.com', password: 'password-123' });
    const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bench@example.com', password: 'password-123' } });
    const headers = { authorization: `Token ${login.json<{ token: string }>().token}` };
    const base = (await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers, payload: { name: 'bench' } })).json<{ table: { id: number; uuid: string; name: string; workspace_id: number } }>().table;
    const baseToken = (await app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/access-token/`, headers })).json<{ access_token: string }>().access_token;
    const started = Date.now();
    await seed(container.db, base.id);
    if (container.dialect === 'postgres') await sql`analyze base_rows`.execute(container.db);
    console.log(`${container.dialect}: seeded ${ROWS} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });

    const caller = { base: { id: base.id, uuid: base.uuid }, permission: 'rw', actor: { user: 'bench', app: null } };
    const targets: Record<string, () => Promise<number>> = {
      kysely: () => handWritten(container.db, container.dialect, base.id),
      service: async () => (await container.sql.execute(caller, { sql: QUERY, parameters: [MIN_AGE], convert_keys: true })).results.length,
      endpoint: async () => {
        const res = await request(`${origin}/api-gateway/api/v2/dtables/${base.uuid}/sql/`, {
          method: 'POST',
          headers: { authorization: `Token ${baseToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ sql: QUERY, parameters: [MIN_AGE], convert_keys: true }),
        });
        const body = (await res.body.json()) as { results?: unknown[] };
        if (res.statusCode !== 200) throw new Error(`endpoint answered ${res.statusCode}`);
        return body.results?.length ?? 0;
      },
    };
    // Same answer from all three before timing anything.
    const counts = await Promise.all(Object.values(targets).map((f) => f()));
    if (new Set(counts).size !== 1) throw new Error(`targets disagree: ${counts.join(', ')}`);
    const same = await container.sql.execute(caller, { sql: QUERY, parameters: [MIN_AGE], convert_keys: true });
    console.log(`each answers ${counts[0]} rows; first: ${JSON.stringify(same.results[0])}`);

    const times: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    const ratios: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    for (const f of Object.values(targets)) await f(); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const roundTimes: Record<string, number> = {};
      for (const [name, f] of Object.entries(targets)) {
        const samples: number[] = [];
        for (let i = 0; i < REPEAT; i++) {
          const t0 = performance.now();
          await f();
          samples.push(performance.now() - t0);
        }
        roundTimes[name] = median(samples);
        times[name]!.push(roundTimes[name]!);
      }
      for (const name of Object.keys(targets)) ratios[name]!.push(roundTimes[name]! / roundTimes.kysely!);
    }
    console.log(`\n${container.dialect}, ${ROWS} rows, ${ROUNDS} rounds × ${REPEAT}: ${QUERY}`);
    console.log('target     median ms   × kysely');
    for (const name of Object.keys(targets)) {
      console.log(`${name.padEnd(10)} ${median(times[name]!).toFixed(1).padStart(9)}   ${median(ratios[name]!).toFixed(2).padStart(8)}`);
    }
    await app.close();
  } finally {
    await container.close();
    await drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
