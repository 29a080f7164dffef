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
    // Let the zip stream drain between pages.
    if (out.writableNeedDrain) await once(out, 'drain');
  }
  sheet.commit();
  await workbook.commit();
}

/** Excel's sheet-name rules: at most 31 characters, none of `[]:*?/\`. */
function sheetName(name: string): string {
  return name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'Sheet1';
}
