import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import ExcelJS from 'exceljs';
import { badRequest } from '../../shared/errors.js';

export type RawCell = string | number | boolean | Date | null;

/** One record of a sheet: its 1-based row number in the file and its cells. */
export interface SourceRow {
  line: number;
  cells: RawCell[];
}

export interface SourceSheet {
  name: string;
  header: string[];
  rows: AsyncGenerator<SourceRow>;
}

export type SourceKind = 'csv' | 'xlsx';

/** Which reader a file name asks for; anything else is refused. */
export function sourceKind(filename: string): SourceKind {
  const lower = filename.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.xlsx')) return 'xlsx';
  throw badRequest('Only .csv and .xlsx files can be imported.');
}

/** The sheets of a file, each read as a stream of rows (a CSV is one sheet named after the file). */
export async function* openSheets(file: string, kind: SourceKind, fallbackName: string, options: { checked?: boolean } = {}): AsyncGenerator<SourceSheet> {
  if (kind === 'csv') yield await csvSheet(file, fallbackName, options.checked === true);
  else yield* xlsxSheets(file);
}

/** Fails on the first byte sequence that is not UTF-8, naming the line it is on. */
class Utf8Check extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private line = 1;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // The whole chunk at once (one call, not one per line); lines are counted only to name a bad one.
    const state = this.decoder;
    try {
      state.decode(chunk, { stream: true });
    } catch {
      done(badRequest(`The file is not UTF-8 text (line ${this.line + badLineOffset(chunk)}): save it as CSV UTF-8.`));
      return;
    }
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, nl + 1)) this.line++;
    done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    try {
      this.decoder.decode();
      done();
    } catch {
      done(badRequest(`The file is not UTF-8 text (line ${this.line}): save it as CSV UTF-8.`));
    }
  }
}

/**
 * The line (0-based, within `chunk`) of the first byte sequence that is not UTF-8. A sequence cut at the
 * chunk's start (begun in the previous chunk) was already checked there, so a fresh decoder skips it.
 */
function badLineOffset(chunk: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lines = 0;
  let from = 0;
  // Continuation bytes at the start belong to a sequence begun in the previous chunk.
  while (from < chunk.length && from < 3 && (chunk[from]! & 0xc0) === 0x80) from++;
  for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
    try {
      decoder.decode(chunk.subarray(from, nl + 1), { stream: true });
    } catch {
      return lines;
    }
    lines++;
    from = nl + 1;
  }
  try {
    decoder.decode(chunk.subarray(from));
  } catch {
    return lines;
  }
  // No line of the chunk is bad by itself: the sequence the previous chunk ended with is, on this line.
  return 0;
}

/**
 * `checked`: the file passed a first read already (pass two of an import): no UTF-8 check and no line
 * numbers, which a file without errors does not need.
 */
async function csvSheet(file: string, name: string, checked: boolean): Promise<SourceSheet> {
  const rowsOf = async function* (): AsyncGenerator<SourceRow> {
    const source = checked ? createReadStream(file) : createReadStream(file).pipe(new Utf8Check());
    const parser = parse({ bom: true, relax_column_count: false, skip_empty_lines: true, max_record_size: 1024 * 1024, info: !checked });
    source.on('error', (error: Error) => parser.destroy(error));
    source.pipe(parser);
    try {
      if (checked) {
        let line = 0;
        for await (const record of parser as AsyncIterable<string[]>) yield { line: ++line, cells: record };
      } else {
        for await (const record of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
          yield { line: record.info.lines, cells: record.record };
        }
      }
    } catch (error) {
      throw asBadFile(error);
    }
  };
  const rows = rowsOf();
  const first = await rows.next();
  if (first.done) throw badRequest('The file is empty: the first row must name the columns.');
  return { name, header: first.value.cells.map((c) => String(c ?? '')), rows };
}

function asBadFile(error: unknown): Error {
  const e = error as { statusCode?: number; code?: string; lines?: number; message?: string };
  if (e.statusCode) return error as Error;
  if (e.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') return badRequest(`Row ${e.lines}: it has a different number of cells than the header.`);
  if (error instanceof CsvError) return badRequest(`Row ${e.lines ?? '?'}: not valid CSV (${e.message ?? e.code}).`);
  return error as Error;
}

async function* xlsxSheets(file: string): AsyncGenerator<SourceSheet> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', hyperlinks: 'ignore', styles: 'ignore', entries: 'ignore' });
  for await (const worksheet of reader as AsyncIterable<AsyncIterable<ExcelJS.Row> & { name: string }>) {
    const rows = (async function* (): AsyncGenerator<SourceRow> {
      for await (const row of worksheet) {
        const values = Array.isArray(row.values) ? (row.values as unknown[]).slice(1) : [];
        yield { line: row.number, cells: values.map((v, i) => xlsxCell(v, row.number, i)) };
      }
    })();
    const first = await rows.next();
    if (first.done) continue; // an empty sheet imports nothing
    yield { name: worksheet.name, header: first.value.cells.map((c) => (c === null ? '' : String(c))), rows };
  }
}

function xlsxCell(value: unknown, line: number, index: number): RawCell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Date) return value;
  const o = value as Record<string, unknown>;
  if ('formula' in o || 'sharedFormula' in o) throw badRequest(`Row ${line}: cell ${index + 1} holds a formula; import its values instead.`);
  if (Array.isArray(o.richText)) return (o.richText as Array<{ text: string }>).map((r) => r.text).join('');
  if (typeof o.text === 'string') return o.text; // hyperlink
  if ('error' in o) return null;
  return String(value);
}
