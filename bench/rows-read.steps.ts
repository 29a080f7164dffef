/**
 * Per-step CPU of a row read (issue #18 item 3), in one process on the seeded base of
 * bench/rows-read.bench.ts: the metadata read, the page query (as rows and as row texts), the link
 * query, presentation, serialization, `listJson` with the row fragments warm and cold, the whole-base
 * build, and a miss and a hit through `inject`. Noisy on a shared machine; compare lines of one run.
 *
 *   BENCH_NO_MAIN=1 npx tsx bench/rows-read.steps.ts [iterations]       # BENCH_DATABASE_URL for PostgreSQL
 *   ONLY=list|whole BENCH_NO_MAIN=1 npx tsx --cpu-prof bench/rows-read.steps.ts 3000   # one step, to profile
 */
import { sql } from 'kysely';
import { startBasegate } from './lib/servers.js';
import { seedRows } from './rows-read.bench.js';
import * as repo from '../src/modules/rows/rows.repository.js';
import { loadLinkCells } from '../src/modules/rows/link-cells.js';
import { presentRow } from '../src/modules/rows/present.js';
import { findTable, visibleColumns } from '../src/modules/rows/metadata.js';
import { notArchived } from '../src/modules/rows/archived-rows.js';

const N = Number(process.argv[2] ?? 500);
const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0', TIME_ZONE: 'Europe/Berlin' });
await seedRows(basegate);
const { seeded, container } = basegate;
const db = container.db;
const dialect = container.dialect;
const { id } = await db.selectFrom('bases').select('id').where('uuid', '=', seeded.base.uuid).executeTakeFirstOrThrow();
const base = { id: Number(id), uuid: seeded.base.uuid };
const bd = container.baseData;
async function time(name: string, f: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await f();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await f();
  const c = process.cpuUsage(c0);
  console.log(`${name.padEnd(40)} ${(((c.user + c.system)) / N).toFixed(0).padStart(6)} µs CPU  ${((performance.now() - t0) * 1000 / N).toFixed(0).padStart(6)} µs wall`);
}
const meta = await bd.writer.read(base);
const table = findTable(meta, { table_name: 'Bench' });
const columns = visibleColumns(table, undefined);
const rows = await repo.listRows(db, { baseId: base.id, tableId: table._id, where: notArchived(dialect), orderBy: [], offset: 0, limit: 100 });
const links = await loadLinkCells(db, base.id, meta, table, columns, rows.map((r) => r._id), undefined, dialect);
const presented = rows.map((r) => presentRow(r, columns, false, links));
if (process.env.ONLY) {
  const f = process.env.ONLY === 'whole' ? () => bd.rows.dtable(base) : () => bd.rows.listJson(base, { table_name: 'Bench', limit: 100 }, {});
  await time('only ' + process.env.ONLY, f);
  await time('only ' + process.env.ONLY, f);
  await basegate.close();
  process.exit(0);
}
await time('writer.read (metadata)', () => bd.writer.read(base));
await time('revision query', () => db.selectFrom('base_metadata').select('revision').where('base_id', '=', base.id).execute());
await time('listRows (with notArchived)', () => repo.listRows(db, { baseId: base.id, tableId: table._id, where: notArchived(dialect), orderBy: [], offset: 0, limit: 100 }));
await time('listRows (no where)', () => repo.listRows(db, { baseId: base.id, tableId: table._id, orderBy: [], offset: 0, limit: 100 }));
await time('raw page select (no parse)', () => sql`select row_id, data, ctime, mtime, creator, last_modifier from base_rows where base_id = ${base.id} and table_id = ${table._id} order by id limit 100`.execute(db));
await time('raw page select data only', () => sql`select data from base_rows where base_id = ${base.id} and table_id = ${table._id} order by id limit 100`.execute(db));
const { loadLinkJson } = await import('../src/modules/rows/link-cells.js');
await time('loadLinkJson', () => loadLinkJson(db, dialect, base.id, meta, table, [columns.find((c) => c.type === 'link')!.key], rows.map((r) => r._id)));
await time('loadLinkCells', () => loadLinkCells(db, base.id, meta, table, columns, rows.map((r) => r._id), undefined, dialect));
await time('presentRow x100', async () => rows.map((r) => presentRow(r, columns, false, links)));
await time('JSON.stringify', async () => JSON.stringify({ rows: presented }));
await time('rows.listJson (warm fragments)', () => bd.rows.listJson(base, { table_name: 'Bench', limit: 100 }, {}));
await time('rows.listJson (cold fragments)', () => { bd.rows.fragments.forget(base.id); return bd.rows.listJson(base, { table_name: 'Bench', limit: 100 }, {}); });
await time('listRowTexts', () => repo.listRowTexts(db, dialect, { baseId: base.id, tableId: table._id, where: notArchived(dialect), orderBy: [], offset: 0, limit: 100 }));
await time('dtable (whole, warm)', () => bd.rows.dtable(base));
await time('dtable (whole, cold)', () => { bd.rows.fragments.forget(base.id); return bd.rows.dtable(base); });
await time('inject GET rows miss', async () => { bd.snapshots.evict(base.id); await basegate.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/?table_name=Bench&limit=100`, headers: { authorization: `Token ${seeded.baseToken}` } }); });
await time('inject GET rows hit', async () => { await basegate.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/?table_name=Bench&limit=100`, headers: { authorization: `Token ${seeded.baseToken}` } }); });
console.log('page query plan:', (await sql`explain query plan select row_id, data from base_rows where base_id = ${base.id} and table_id = ${table._id} and ${notArchived(dialect)} order by id limit 100`.execute(db).catch(() => ({ rows: [] }))).rows);
await basegate.close();
