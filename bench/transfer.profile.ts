/**
 * Where a CSV import's time goes, beside the plain insert of the same rows (bench/transfer.bench.ts's
 * baseline) in the same process: the import's total, the time inside its batch writes
 * (`RowsService.append`), inside the release (`RowsService.publishHold`), and the rest (upload,
 * two parsing passes, type inference, cell conversion). Add `--cpu-prof` for a CPU profile.
 *
 *   npx tsx bench/transfer.profile.ts [rows]            (default 20,000)
 *   BENCH_DATABASE_URL=postgres://… npx tsx bench/transfer.profile.ts 20000
 */
import { createWriteStream, mkdtempSync, openAsBlob } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FormData, request } from 'undici';
import { startBasegate } from './lib/servers.js';

const ROWS = Number(process.argv[2] ?? 20_000);
const STATUS = ['open', 'closed', 'waiting'];
const record = (i: number) => ({ Name: `task ${i}`, Points: i, Due: `2026-0${(i % 9) + 1}-1${i % 10}`, Done: i % 2 === 0, Status: STATUS[i % 3]!, Note: `note ${i}` });

const server = await startBasegate({ ASSET_MAX_BYTES: String(4 * 1024 ** 3), REQUEST_TIMEOUT_MS: '3600000', LOG_LEVEL: 'silent' });
const { base, accountToken, baseToken } = server.seeded;
const rows = server.container.baseData.rows;
const timers = { append: 0, publish: 0 };
const wrap = <K extends 'append' | 'publishHold'>(name: K, slot: keyof typeof timers) => {
  const original = (rows[name] as (...a: unknown[]) => Promise<unknown>).bind(rows);
  (rows as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
    const t0 = performance.now();
    try {
      return await original(...args);
    } finally {
      timers[slot] += performance.now() - t0;
    }
  };
};

const columns = [
  { column_name: 'Name', column_type: 'text' },
  { column_name: 'Points', column_type: 'number' },
  { column_name: 'Due', column_type: 'date' },
  { column_name: 'Done', column_type: 'checkbox' },
  { column_name: 'Status', column_type: 'single-select' },
  { column_name: 'Note', column_type: 'text' },
];
const created = await request(`${server.origin}/api-gateway/api/v2/dtables/${base.uuid}/tables/`, {
  method: 'POST',
  headers: { authorization: `Token ${baseToken}`, 'content-type': 'application/json' },
  body: JSON.stringify({ table_name: 'Plain', columns }),
});
await created.body.dump();
const baseRef = { id: (await server.container.access.findByUuid(base.uuid))!.id, uuid: base.uuid };
const actor = { user: 'bench@auth.local', app: null };
let t0 = performance.now();
for (let i = 0; i < ROWS; i += 1000) {
  await rows.append(baseRef, actor, { table_name: 'Plain', rows: Array.from({ length: Math.min(1000, ROWS - i) }, (_, j) => record(i + j)) });
}
const plainMs = performance.now() - t0;

const file = path.join(mkdtempSync(path.join(tmpdir(), 'basegate-profile-')), 'big.csv');
const out = createWriteStream(file);
out.write('Name,Points,Due,Done,Status,Note\n');
for (let i = 0; i < ROWS; i++) {
  const r = record(i);
  if (!out.write(`${r.Name},${r.Points},${r.Due},${r.Done},${r.Status},${r.Note}\n`)) await once(out, 'drain');
}
out.end();
await once(out, 'finish');

wrap('append', 'append');
wrap('publishHold', 'publish');
t0 = performance.now();
const form = new FormData();
form.append('dtable_uuid', base.uuid);
form.append('file', await openAsBlob(file), 'big.csv');
const res = await request(`${server.origin}/api/v2.1/workspace/${base.workspace_id}/synchronous-import/import-excel-csv-to-table/`, {
  method: 'POST',
  headers: { authorization: `Token ${accountToken}` },
  body: form,
  headersTimeout: 3_600_000,
  bodyTimeout: 3_600_000,
});
const text = await res.body.text();
if (res.statusCode !== 200) throw new Error(`import: ${res.statusCode} ${text}`);
const importMs = performance.now() - t0;
const ms = (v: number) => `${v.toFixed(0).padStart(7)} ms`;
console.log(`${ROWS} rows, ${server.container.dialect}`);
console.log(`plain insert         ${ms(plainMs)}  ${Math.round(ROWS / (plainMs / 1000))} rows/s`);
console.log(`import total         ${ms(importMs)}  ${Math.round(ROWS / (importMs / 1000))} rows/s  ratio ${(plainMs / importMs).toFixed(2)}`);
console.log(`  batch writes       ${ms(timers.append)}`);
console.log(`  release            ${ms(timers.publish)}`);
console.log(`  rest (upload, parse, infer, convert) ${ms(importMs - timers.append - timers.publish)}`);
await server.close();
