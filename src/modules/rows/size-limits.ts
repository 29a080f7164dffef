import { badRequest } from '../../shared/errors.js';
import type { BaseMetadata } from './metadata.js';
import { SerializedJson } from './serialized-json.js';

/**
 * Size limits on stored base data (issue 17): one cell, keys per written row, a column's `data` or a
 * view's settings, a base's whole structure, and the whole-base read. Refusals are 400s naming the
 * limit and its variable. Configured once at start (container) from CELL_MAX_BYTES,
 * COLUMN_DATA_MAX_BYTES, BASE_METADATA_MAX_BYTES and BASE_READ_MAX_BYTES; see docs/security.md.
 */
export interface SizeLimits {
  cellMaxBytes: number;
  columnDataMaxBytes: number;
  baseMetadataMaxBytes: number;
  baseReadMaxBytes: number;
}

export const DEFAULT_SIZE_LIMITS: SizeLimits = Object.freeze({
  cellMaxBytes: 1024 * 1024,
  columnDataMaxBytes: 65_536,
  baseMetadataMaxBytes: 4 * 1024 * 1024,
  baseReadMaxBytes: 256 * 1024 * 1024,
});

/** Keys a written row may carry beyond its table's columns (the row's own `_id`, `_ctime`, … sent back by clients). */
export const EXTRA_ROW_KEYS = 16;

let limits: SizeLimits = DEFAULT_SIZE_LIMITS;

export function configureSizeLimits(configured: SizeLimits): void {
  limits = Object.freeze({ ...configured });
}

export function sizeLimits(): SizeLimits {
  return limits;
}

/** A written row's keys: at most the table's column count (plus the row's own system keys). */
export function checkRowKeys(input: Record<string, unknown>, columnCount: number, label: string): void {
  let keys = 0;
  for (const _ in input) keys++;
  const max = columnCount + EXTRA_ROW_KEYS;
  if (keys > max) throw badRequest(`${label}: ${keys} keys, above the limit of ${max} (the table's ${columnCount} columns and ${EXTRA_ROW_KEYS} more).`);
}

/** One stored cell value, measured as the JSON it is stored as. */
export function checkCell(value: unknown, columnName: string, label: string): void {
  const max = limits.cellMaxBytes;
  let bytes: number;
  if (typeof value === 'string') {
    if (value.length * 3 + 2 <= max) return;
    bytes = Buffer.byteLength(value, 'utf8') + 2;
  } else if (value !== null && typeof value === 'object') {
    bytes = jsonBytes(value);
  } else {
    return;
  }
  if (bytes > max) throw badRequest(`${label}: value of column ${columnName} is ${bytes} bytes, above the limit of ${max} bytes (CELL_MAX_BYTES).`);
}

/**
 * The structure document about to be stored, as JSON: whole (BASE_METADATA_MAX_BYTES) and each
 * column's `data` and view (COLUMN_DATA_MAX_BYTES). Returns the JSON text so it is built once.
 */
export function checkedMetadataJson(meta: BaseMetadata): string {
  for (const table of meta.tables) {
    for (const column of table.columns) {
      if (column.data !== null && column.data !== undefined && jsonBytes(column.data) > limits.columnDataMaxBytes) {
        throw badRequest(`column_data of column ${column.name} is above the limit of ${limits.columnDataMaxBytes} bytes (COLUMN_DATA_MAX_BYTES).`);
      }
    }
    for (const view of table.views) {
      if (jsonBytes(view) > limits.columnDataMaxBytes) {
        throw badRequest(`The settings of view ${String(view.name)} are above the limit of ${limits.columnDataMaxBytes} bytes (COLUMN_DATA_MAX_BYTES).`);
      }
    }
  }
  const json = JSON.stringify(meta);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.baseMetadataMaxBytes) {
    throw badRequest(`The base's structure would be ${bytes} bytes, above the limit of ${limits.baseMetadataMaxBytes} bytes (BASE_METADATA_MAX_BYTES).`);
  }
  return json;
}

/** The whole-base read's body, refused (400) above BASE_READ_MAX_BYTES instead of built without bound. */
export function wholeBaseBody(build: () => unknown): Buffer {
  // A SerializedJson was put together from row fragments (rows.service.ts `dtable`); its length is checked here as well.
  let text: string;
  try {
    const built = build();
    text = built instanceof SerializedJson ? built.text : JSON.stringify(built);
  } catch (error) {
    // V8 cannot make a string this long at all.
    if (error instanceof RangeError) throw tooLargeToRead();
    throw error;
  }
  if (text.length > limits.baseReadMaxBytes) throw tooLargeToRead();
  const body = Buffer.from(text);
  if (body.length > limits.baseReadMaxBytes) throw tooLargeToRead();
  return body;
}

/** The answer to a whole-base read above BASE_READ_MAX_BYTES (400). */
export function tooLargeToRead() {
  return badRequest(
    `The base is larger than the limit of ${limits.baseReadMaxBytes} bytes for reading it whole (BASE_READ_MAX_BYTES); read its tables with the rows endpoints instead.`,
  );
}

function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}
