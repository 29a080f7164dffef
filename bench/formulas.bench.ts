/**
 * Formula costs, each beside a baseline measured in the same run (SQLite, or PostgreSQL with
 * BENCH_DATABASE_URL set), through the HTTP API in process (`app.inject`):
 *
 * 1. list 1,000 rows of a table with 5 formula columns vs the same rows with 5 plain number columns
 *    (formula cells are materialized, so this should be ~1×);
 * 2. update one cell that link formulas read: (a) one Items row that 1,000 Orders rows roll up (each
 *    order links to it), (b) one of 1,000 Items rows one order rolls up, (c) a cell of the row of (a)
 *    that no rollup reads — vs the same update in a table nobody links to;
 * 3. add a formula column to a 100,000-row table vs adding an auto-number column (also a full rewrite).
 *
 *   npx tsx bench/formulas.bench.ts
 *
 * Knobs: BENCH_ITERATIONS (5), BENCH_BIG_ROWS (100000), BENCH_DATABASE_URL (a fresh schema is used).
 */
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Migrator } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { createContainer } from '../src/container.js';
import { connect } from '../src/db/index.js';
import { migrations } from '../src/db/migrations/index.js';
import { median } from './lib/harness.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const BIG = Number(process.env.BENCH_BIG_ROWS ?? 100_000);
const PG_URL = process.env.BENCH_DATABASE_URL;

async function open() {
  if (!PG_URL) {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'basegate-formula-bench-')), 'basegate.sqlite3');
    return { handle: connect({ databaseUrl: `sqlite:${file}`, dataDir: '/nonexistent' }), schema: undefined, drop: async () => undefined };
  }
  const schema = `bench_formulas_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const drop = async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA ${schema} CASCADE`);
    await c.end();
  };
  return { handle: connect({ databaseUrl: PG_URL, dataDir: '/nonexistent', pgSchema: schema }), schema, drop };
}

async function main() {
  const { handle, schema, drop } = await open();
  const config = loadConfig(
    { SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-fb-')), LOG_LEVEL: 'silent', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' },
    { persistSecret: false },
  );
  const container = createContainer(config, { database: handle });
  const migrated = await new Migrator({ db: container.db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema }).migrateToLatest();
  if (migrated.error) throw migrated.error;
  const app = await buildApp(container, { logger: false });
  await container.accounts.createUser({ email: 'bench@example.com', password: 'password-123' });
  const login = await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bench@example.com', password: 'password-123' } });
  const headers = { authorization: `Token ${login.json<{ token: string }>().token}` };
  const created = await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers, payload: { name: 'bench' } });
  const base = created.json<{ table: { id: number; uuid: string; workspace_id: number } }>().table;
  const access = await app.inject({ method: 'GET', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/access-token/`, headers });
  const token = access.json<{ access_token: string }>().access_token;

  const call = async (method: 'GET' | 'POST' | 'PUT', suffix: string, payload?: unknown) => {
    const res = await app.inject({ method, url: `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`, headers: { authorization: `Token ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
    if (res.statusCode !== 200) throw new Error(`${method} ${suffix}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const timed = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const report = (label: string, subject: number[], baseline: number[]) => {
    const [a, b] = [median(subject), median(baseline)];
    console.log(`${label.padEnd(62)} ${a.toFixed(1).padStart(9)} ms  baseline ${b.toFixed(1).padStart(9)} ms  ratio ${(a / b).toFixed(2)}×`);
  };

  console.log(`formulas bench — ${PG_URL ? 'postgres' : 'sqlite'}, ${ITERATIONS} iterations (medians)`);

  // 1. list 1,000 rows: 5 formula columns vs 5 plain columns
  const plain = ['A', 'B', 'C', 'D', 'E'];
  await call('POST', 'tables/', { table_name: 'Plain', columns: [{ column_name: 'Name', column_type: 'text' }, { column_name: 'X', column_type: 'number' }, ...plain.map((n) => ({ column_name: n, column_type: 'number' }))] });
  const formulas = ['{X} * 2', 'round({X} / 3, 2)', 'len({Name})', '{X} + len({Name})', 'if({X} > 500, 1, 0)'];
  await call('POST', 'tables/', { table_name: 'Formula', columns: [{ column_name: 'Name', column_type: 'text' }, { column_name: 'X', column_type: 'number' }, ...plain.map((n, i) => ({ column_name: n, column_type: 'formula', column_data: { formula: formulas[i] } }))] });
  const rows = Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${i}`, X: i }));
  await call('POST', 'rows/', { table_name: 'Plain', rows: rows.map((r) => ({ ...r, A: r.X * 2, B: Math.round((r.X / 3) * 100) / 100, C: r.Name.length, D: r.X + r.Name.length, E: r.X > 500 ? 1 : 0 })) });
  await call('POST', 'rows/', { table_name: 'Formula', rows });
  const listF: number[] = [];
  const listP: number[] = [];
  for (let i = 0; i <= ITERATIONS; i++) {
    // Alternate which goes first, so warm caches favour neither.
    const list = (table: string) => timed(() => call('GET', `rows/?table_name=${table}&limit=1000`));
    const p = i % 2 ? await list('Plain') : 0;
    const f = await list('Formula');
    const p2 = i % 2 ? p : await list('Plain');
    if (i > 0) listF.push(f), listP.push(p2);
  }
  report('list 1,000 rows: 5 formula columns vs 5 plain columns', listF, listP);

  // 2. one cell that link formulas read
  await call('POST', 'tables/', { table_name: 'Items', columns: [{ column_name: 'Item', column_type: 'text' }, { column_name: 'Price', column_type: 'number' }] });
  await call('POST', 'tables/', { table_name: 'Orders', columns: [{ column_name: 'Order', column_type: 'text' }] });
  await call('POST', 'tables/', { table_name: 'Lonely', columns: [{ column_name: 'Item', column_type: 'text' }, { column_name: 'Price', column_type: 'number' }] });
  const link = await call('POST', 'columns/', { table_name: 'Orders', column_name: 'Lines', column_type: 'link', column_data: { table: 'Orders', other_table: 'Items' } });
  await call('POST', 'columns/', { table_name: 'Orders', column_name: 'Total', column_type: 'link-formula', column_data: { formula: 'rollup', link_column_key: link.key, level1_linked_column_key: 'Price', summary_method: 'sum' } });
  const items: string[] = (await call('POST', 'rows/', { table_name: 'Items', rows: Array.from({ length: 1000 }, (_, i) => ({ Item: `i${i}`, Price: i })) })).row_ids.map((r: { _id: string }) => r._id);
  const orders: string[] = (await call('POST', 'rows/', { table_name: 'Orders', rows: Array.from({ length: 1000 }, (_, i) => ({ Order: `o${i}` })) })).row_ids.map((r: { _id: string }) => r._id);
  const lonely: string[] = (await call('POST', 'rows/', { table_name: 'Lonely', rows: [{ Item: 'x', Price: 1 }] })).row_ids.map((r: { _id: string }) => r._id);
  // (a) every order links to items[0]; (b) orders[0] links to all items.
  const map: Record<string, string[]> = Object.fromEntries(orders.map((o) => [o, [items[0]!]]));
  map[orders[0]!] = items;
  await call('POST', 'links/', { link_id: link.data.link_id, table_name: 'Orders', other_table_name: 'Items', other_rows_ids_map: map });
  const fanOut: number[] = [];
  const fanIn: number[] = [];
  const base1: number[] = [];
  const unread: number[] = [];
  for (let i = 0; i <= ITERATIONS; i++) {
    const a = await timed(() => call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[0], row: { Price: 1000 + i } }] }));
    const d = await timed(() => call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[0], row: { Item: `renamed ${i}` } }] }));
    const b = await timed(() => call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: items[999], row: { Price: 2000 + i } }] }));
    const c = await timed(() => call('PUT', 'rows/', { table_name: 'Lonely', updates: [{ row_id: lonely[0], row: { Price: 3000 + i } }] }));
    if (i > 0) fanOut.push(a), fanIn.push(b), base1.push(c), unread.push(d);
  }
  const check = await call('GET', `rows/${orders[1]}/?table_name=Orders&convert_keys=true`);
  if (check.Total !== 1000 + ITERATIONS) throw new Error(`rollup not current: ${JSON.stringify(check.Total)}`);
  report('update 1 cell rolled up by 1,000 linked orders (1,000 rollups)', fanOut, base1);
  report('update 1 of 1,000 items one order rolls up (1 rollup)', fanIn, base1);
  report('update a cell no rollup reads, in the row 1,000 orders link to', unread, base1);

  // 3. add a formula column to a BIG-row table (rows inserted directly: the bench measures the column add)
  const big = await call('POST', 'tables/', { table_name: 'Big', columns: [{ column_name: 'Name', column_type: 'text' }, { column_name: 'X', column_type: 'number' }] });
  const keys = big.columns.map((c: { key: string }) => c.key);
  for (let start = 0; start < BIG; start += 2000) {
    const now = Date.now();
    const part = Array.from({ length: Math.min(2000, BIG - start) }, (_, j) => {
      const n = start + j;
      return { base_id: base.id, table_id: big._id, row_id: `big${String(n).padStart(19, '0')}`, data: JSON.stringify({ [keys[0]]: `row ${n}`, [keys[1]]: n }), ctime: now, mtime: now, creator: 'bench', last_modifier: 'bench' };
    });
    await container.db.insertInto('base_rows').values(part).execute();
  }
  const addFormula = await timed(() => call('POST', 'columns/', { table_name: 'Big', column_name: 'Double', column_type: 'formula', column_data: { formula: '{X} * 2 + len({Name})' } }));
  const addAuto = await timed(() => call('POST', 'columns/', { table_name: 'Big', column_name: 'No', column_type: 'auto-number' }));
  const sample = await call('GET', 'rows/?table_name=Big&limit=1&start=99&convert_keys=true');
  if (sample.rows[0].Double !== 99 * 2 + 'row 99'.length) throw new Error(`formula not computed: ${JSON.stringify(sample.rows[0])}`);
  report(`add a formula column to a ${BIG.toLocaleString('en')}-row table vs an auto-number column`, [addFormula], [addAuto]);

  await app.close();
  await container.close();
  await drop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
