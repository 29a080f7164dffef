/**
 * CSV import and export at scale (issue #27): BENCH_ROWS rows (default 1,000,000) imported from a CSV
 * file through `synchronous-import/import-excel-csv-to-table` (streamed upload, two passes, 1000-row
 * changes), beside the plain multi-row insert of the same rows through the rows service
 * (`RowsService.append`, 1000 rows per call: the write path import uses, without file, parsing or
 * HTTP), in the same run; then the imported table exported as CSV and as XLSX. Prints rows/s, the
 * import's rate as a ratio of the plain insert's (aim: ≥ 0.5), and each phase's peak RSS growth; the
 * import also runs at a tenth of the rows, so "memory flat in the file size" reads off two numbers.
 *
 *   npx tsx bench/transfer.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/transfer.bench.ts
 *
 * Knobs: BENCH_ROWS; BENCH_PLAIN_ROWS (the baseline's rows, default BENCH_ROWS: a smaller baseline
 * keeps a 1,000,000-row run short, its rate is per row either way); BENCH_SMALL=0 skips the tenth-size
 * import, BENCH_EXPORT=0 the exports; BENCH_READS=1 reads the imported table after the import (a filtered
 * read of 100 rows by a number range, repeated while its row index builds, and a page 100 rows from the
 * end), to show a big imported table is usable; BENCH_READS_AFTER=idle reads only once the index builds the
 * import queued are done (timed), BENCH_BULK_FILTER_COLUMNS sets how many number and date columns get a
 * filter index then (PostgreSQL; 0 for the A/B). The baseline runs twice, half its rows before the import and half
 * after it, and the ratio is against the rate of both halves together: on a shared machine whose load
 * drifts during a long import, a baseline measured only before it would compare two different loads.
 *
 *   BENCH_ROWS=1000000 BENCH_PLAIN_ROWS=200000 BENCH_SMALL=0 npx tsx bench/transfer.bench.ts
 */
import { createWriteStream, openAsBlob, readFileSync, statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FormData, request } from 'undici';
import { startBasegate } from './lib/servers.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PLAIN_ROWS = Number(process.env.BENCH_PLAIN_ROWS ?? ROWS);
const SMALL = process.env.BENCH_SMALL !== '0';
const EXPORTS = process.env.BENCH_EXPORT !== '0';
const READS = process.env.BENCH_READS === '1';
/** BENCH_READS_AFTER=idle: the reads wait until the row index builds the import queued are done (a user back later), timed. */
const READS_AFTER_IDLE = process.env.BENCH_READS_AFTER === 'idle';
/** BENCH_BULK_FILTER_COLUMNS: number and date columns whose filter indexes an import builds (PostgreSQL; 0: none, the A/B). */
const BULK_FILTER_COLUMNS = process.env.BENCH_BULK_FILTER_COLUMNS;
const STATUS = ['open', 'closed', 'waiting'];
const record = (i: number) => ({ Name: `task ${i}`, Points: i, Due: `2026-0${(i % 9) + 1}-1${i % 10}`, Done: i % 2 === 0, Status: STATUS[i % 3]!, Note: `note ${i}` });

async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  out.write('Name,Points,Due,Done,Status,Note\n');
  for (let i = 0; i < rows; i++) {
    const r = record(i);
    if (!out.write(`${r.Name},${r.Points},${r.Due},${r.Done},${r.Status},${r.Note}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Runs `work`, sampling RSS every 50 ms: seconds taken, the peak growth and the peak itself in MB. */
async function measure(work: () => Promise<void>): Promise<{ seconds: number; peakMb: number; peakRssMb: number }> {
  global.gc?.();
  const start = process.memoryUsage().rss;
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const t0 = process.hrtime.bigint();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, peakMb: (peak - start) / 1024 / 1024, peakRssMb: peak / 1024 / 1024 };
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-transfer-'));
  const server = await startBasegate({ ASSET_MAX_BYTES: String(4 * 1024 ** 3), REQUEST_TIMEOUT_MS: '3600000', LOG_LEVEL: 'silent' });
  const { base, accountToken, baseToken } = server.seeded;
  const auth = { authorization: `Token ${accountToken}` };
  const dialect = server.container.dialect;
  if (BULK_FILTER_COLUMNS !== undefined) server.container.baseData.indexes.options.bulkFilterColumns = Number(BULK_FILTER_COLUMNS);
  const baseRef = { id: (await server.container.access.findByUuid(base.uuid))!.id, uuid: base.uuid };
  const actor = { user: 'bench@auth.local', app: null };
  console.log(`transfer bench: ${ROWS} rows, ${dialect}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);

  // Baseline: the same rows through the rows service, 1000 per call, into a table of the same columns.
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
  if (created.statusCode !== 200) throw new Error(`create table: ${await created.body.text()}`);
  await created.body.dump();
  const rate = (rows: number, s: number) => Math.round(rows / s);
  const line = (label: string, rows: number, m: { seconds: number; peakMb: number; peakRssMb: number }) =>
    console.log(`${label.padEnd(34)} ${String(rate(rows, m.seconds)).padStart(8)} rows/s  ${m.seconds.toFixed(1).padStart(7)} s  peak RSS +${m.peakMb.toFixed(0)} MB (${m.peakRssMb.toFixed(0)} MB)`);
  const plainInsert = (from: number, to: number) =>
    measure(async () => {
      for (let i = from; i < to; i += 1000) {
        const rows = Array.from({ length: Math.min(1000, to - i) }, (_, j) => record(i + j));
        await server.container.baseData.rows.append(baseRef, actor, { table_name: 'Plain', rows });
      }
    });
  const half = Math.ceil(PLAIN_ROWS / 2000) * 1000;
  const plainBefore = await plainInsert(0, half);
  line(`plain insert, before ${half}`, half, plainBefore);

  const importFile = async (rows: number, name: string) => {
    const file = path.join(dir, `${name}.csv`);
    await writeCsv(file, rows);
    const size = statSync(file).size;
    const result = await measure(async () => {
      const form = new FormData();
      form.append('dtable_uuid', base.uuid);
      form.append('file', await openAsBlob(file), `${name}.csv`);
      const res = await request(`${server.origin}/api/v2.1/workspace/${base.workspace_id}/synchronous-import/import-excel-csv-to-table/`, { method: 'POST', headers: auth, body: form, headersTimeout: 3_600_000, bodyTimeout: 3_600_000 });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`import: ${res.statusCode} ${text}`);
    });
    return { ...result, size };
  };
  if (SMALL) {
    const small = await importFile(Math.max(1, Math.floor(ROWS / 10)), 'small');
    line(`import CSV ${Math.floor(ROWS / 10)} rows (${(small.size / 1e6).toFixed(0)} MB)`, Math.floor(ROWS / 10), small);
  }
  const big = await importFile(ROWS, 'big');
  line(`import CSV ${ROWS} rows (${(big.size / 1e6).toFixed(0)} MB)`, ROWS, big);
  if (READS) await readBack(server, ROWS);
  const plainAfter = await plainInsert(half, PLAIN_ROWS);
  if (PLAIN_ROWS > half) line(`plain insert, after ${PLAIN_ROWS - half}`, PLAIN_ROWS - half, plainAfter);
  const plainSeconds = plainBefore.seconds + plainAfter.seconds;

  const exportAs = async (format: 'csv' | 'xlsx') =>
    measure(async () => {
      const res = await request(
        `${server.origin}/api/v2.1/workspace/${base.workspace_id}/synchronous-export/export-table-to-excel/?dtable_name=${base.name}&table_name=big&format=${format}`,
        { headers: auth, headersTimeout: 3_600_000, bodyTimeout: 3_600_000 },
      );
      if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode}`);
      let bytes = 0;
      for await (const chunk of res.body) bytes += (chunk as Buffer).length;
      if (bytes === 0) throw new Error('empty export');
    });
  if (EXPORTS) {
    line('export CSV', ROWS, await exportAs('csv'));
    line('export XLSX', ROWS, await exportAs('xlsx'));
  }
  console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log(`plain insert rate (both halves): ${rate(PLAIN_ROWS, plainSeconds)} rows/s`);
  console.log(`import rate / plain insert rate: ${(rate(ROWS, big.seconds) / rate(PLAIN_ROWS, plainSeconds)).toFixed(2)} (aim ≥ 0.50)`);
  await server.close();
}

/** Reads of the imported table `big` through the rows API: a filtered read (4 times, 5 s apart: the first may read the table while its row index builds) and a deep page. */
async function readBack(server: Awaited<ReturnType<typeof startBasegate>>, rows: number): Promise<void> {
  const call = async (label: string, method: 'GET' | 'POST', suffix: string, payload?: object) => {
    const t0 = process.hrtime.bigint();
    const res = await server.app.inject({
      method,
      url: `/api-gateway/api/v2/dtables/${server.seeded.base.uuid}/${suffix}`,
      headers: { authorization: `Token ${server.seeded.baseToken}` },
      ...(payload ? { payload } : {}),
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const body = res.statusCode === 200 ? (res.json() as { rows: Array<Record<string, unknown>> }) : undefined;
    const first = body?.rows[0];
    console.log(`${label.padEnd(34)} ${res.statusCode} ${ms.toFixed(0).padStart(7)} ms  ${body ? `${body.rows.length} rows, first ${String(first?.Name ?? first?._id ?? '-')}` : res.body.slice(0, 200)}`);
  };
  if (READS_AFTER_IDLE) {
    const t0 = process.hrtime.bigint();
    await server.container.baseData.indexes.idle();
    console.log(`${'index builds after the import'.padEnd(34)}     ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0).padStart(7)} ms`);
  }
  const from = Math.floor(rows * 0.9);
  for (let i = 0; i < 4; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 5000));
    await call(`filtered read (try ${i + 1})`, 'POST', 'filtered-rows/?table_name=big&limit=100', {
      filters: [
        { column_name: 'Points', filter_predicate: 'greater_or_equal', filter_term: from },
        { column_name: 'Points', filter_predicate: 'less', filter_term: from + 100 },
      ],
    });
  }
  await call('deep page (start = rows - 100)', 'GET', `rows/?table_name=big&limit=100&start=${rows - 100}`);
  await call('deep page again', 'GET', `rows/?table_name=big&limit=100&start=${rows - 200}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
