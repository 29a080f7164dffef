import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify';
import ExcelJS from 'exceljs';
import type { ExportSource } from './export-rows.js';
import { safeText } from './cell-text.js';

export type ExportFormat = 'xlsx' | 'csv';

/** Writes the source as CSV (UTF-8 with BOM, so spreadsheets read the encoding) into `out`, respecting backpressure. */
export async function writeCsv(source: ExportSource, out: Writable): Promise<void> {
  const csv = stringify({ bom: true, cast: { boolean: (b) => (b ? 'true' : 'false') } });
  csv.pipe(out);
  const write = async (record: unknown[]) => {
    if (!csv.write(record)) await once(csv, 'drain');
  };
  await write(source.columns.map((c) => safeText(c.name)));
  for await (const page of source.rows()) for (const record of page) await write(record);
  csv.end();
  await once(out, 'finish');
}

/** Writes the source as one XLSX worksheet, streamed row by row (exceljs' streaming writer). */
export async function writeXlsx(source: ExportSource, out: Writable): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false });
  const sheet = workbook.addWorksheet(sheetName(source.view?.name ?? source.table.name));
  sheet.addRow(source.columns.map((c) => safeText(c.name))).commit();
  for await (const page of source.rows()) {
    for (const record of page) sheet.addRow(record).commit();
    // The next page only once what this one wrote has moved on: exceljs's sheet stream hands its data to
    // the zip ignoring backpressure, so a reader that stops would otherwise leave the whole table buffered.
    await drained(sheet, out);
  }
  sheet.commit();
  await workbook.commit();
}

/** How long `drained` waits between looks at the streams. */
const DRAIN_POLL_MS = 5;

/**
 * Resolves when the worksheet's data has moved on (exceljs internals, read defensively: its sheet stream
 * keeps what the zip has not taken in `buffers` and writes into the zip's entry stream in `pipes`) and
 * `out` takes more; or when `out` is gone. Polled: those streams announce no drain that covers all of them.
 */
async function drained(sheet: unknown, out: Writable): Promise<void> {
  const stream = (sheet as { stream?: { buffers?: unknown[]; pipes?: unknown[] } }).stream;
  const waiting = () => {
    if (out.destroyed || out.writableEnded) return false;
    if (out.writableNeedDrain) return true;
    if (Array.isArray(stream?.buffers) && stream.buffers.length > 2) return true;
    return (stream?.pipes ?? []).some(needsDrain);
  };
  // One turn of the event loop per page at least: the streams between move on in it (and other requests run).
  await new Promise((r) => setImmediate(r));
  while (waiting()) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
}

/** Whether a writable stream holds more than its high-water mark (node's, or readable-stream 2's, which archiver uses: no `writableNeedDrain`). */
function needsDrain(stream: unknown): boolean {
  const s = stream as { writableNeedDrain?: boolean; _writableState?: { length?: number; highWaterMark?: number } } | undefined;
  if (typeof s?.writableNeedDrain === 'boolean') return s.writableNeedDrain;
  const state = s?._writableState;
  return typeof state?.length === 'number' && typeof state.highWaterMark === 'number' && state.length >= state.highWaterMark;
}

/** Excel's sheet-name rules: at most 31 characters, none of `[]:*?/\`. */
function sheetName(name: string): string {
  return name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'Sheet1';
}
