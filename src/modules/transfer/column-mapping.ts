import type { TableMeta } from '../rows/index.js';
import { badRequest } from '../../shared/errors.js';
import type { ColumnPlan, ColumnType } from './infer.js';

/**
 * A user's column mapping (the import routes' optional `column_mapping` field, JSON): per sheet, per
 * column of the file, `null` to skip it, or `{column, type?}`: the column it goes to (a new table: the
 * new column's name and type, one of the types all its cells convert to; an existing table: the name of
 * one of its columns). A file column the mapping does not name goes where it would without one.
 */
export type ColumnMapping = Record<string, Record<string, { column: string; type?: ColumnType } | null>>;

const TYPES: readonly ColumnType[] = ['text', 'number', 'date', 'checkbox', 'single-select'];
/** The rows API's first-column rule. */
const FIRST_COLUMN_TYPES = new Set<ColumnType>(['text', 'number', 'date', 'single-select']);
const invalid = () => badRequest('column_mapping invalid.');

/** The field's text as a mapping; undefined when absent or empty; a 400 naming the field when malformed. */
export function parseMapping(text: unknown): ColumnMapping | undefined {
  if (text === undefined || text === '') return undefined;
  if (typeof text !== 'string' || text.length > 100_000) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid();
  }
  if (!isObject(value)) throw invalid();
  for (const sheet of Object.values(value)) {
    if (!isObject(sheet)) throw invalid();
    for (const to of Object.values(sheet)) {
      if (to === null) continue;
      if (!isObject(to) || typeof to.column !== 'string' || to.column.trim() === '' || to.column.length > 255) throw invalid();
      if (to.type !== undefined && !TYPES.includes(to.type as ColumnType)) throw invalid();
    }
  }
  return value as ColumnMapping;
}

/** A sheet's planned new columns after the mapping: renamed, retyped (only to a type its cells fit) or left out. */
export function mapNewColumns(sheet: string, columns: ColumnPlan[], mapping: ColumnMapping | undefined): ColumnPlan[] {
  const map = mapping?.[sheet];
  if (!map) return columns;
  checkSources(sheet, columns, map);
  const out: ColumnPlan[] = [];
  for (const c of columns) {
    const to = map[c.name];
    if (to === null) continue;
    if (to === undefined) {
      out.push(c);
      continue;
    }
    const type = to.type ?? c.type;
    if (c.types && !c.types.includes(type)) throw badRequest(`Column ${c.name} of the file cannot be a ${type} column: not all its cells are.`);
    const name = to.column.trim();
    out.push({ name, type, ...(type === c.type && c.data ? { data: c.data } : type === 'date' ? { data: { format: 'YYYY-MM-DD' } } : {}), source: c.name });
  }
  unique(out);
  if (out.length === 0) throw badRequest(`No column of sheet ${sheet} is imported.`);
  if (!FIRST_COLUMN_TYPES.has(out[0]!.type)) throw badRequest(`The first column (${out[0]!.name}) cannot be a ${out[0]!.type} column.`);
  return out;
}

/**
 * A sheet's columns against an existing table with the mapping: each file column to the table's column
 * the mapping names (or of its own name), converted for that column's type (a number, date or checkbox
 * column takes only a file column all of whose cells are one); undefined for a column with no target.
 */
export function mapToTable(sheet: string, table: TableMeta, columns: ColumnPlan[], mapping: ColumnMapping | undefined): ColumnPlan[] {
  const map = mapping?.[sheet];
  if (map) checkSources(sheet, columns, map);
  const out: ColumnPlan[] = [];
  for (const c of columns) {
    const to = map?.[c.name];
    if (to === null) continue;
    const name = to ? to.column.trim() : c.name;
    const target = table.columns.find((t) => t.name === name);
    if (!target) {
      if (to) throw badRequest(`Column ${name} not found in table ${table.name}.`);
      continue;
    }
    const type = (['number', 'date', 'checkbox'] as const).find((t) => t === target.type) ?? 'text';
    if (to && c.types && !c.types.includes(type)) throw badRequest(`Column ${c.name} of the file does not fit column ${name} (${target.type}): not all its cells are.`);
    out.push({ name, type, ...(name !== c.name ? { source: c.name } : {}) });
  }
  unique(out);
  if (out.length === 0) throw badRequest(`No column of the file is in table ${table.name}.`);
  return out;
}

function checkSources(sheet: string, columns: ColumnPlan[], map: Record<string, unknown>): void {
  for (const source of Object.keys(map)) if (!columns.some((c) => c.name === source)) throw badRequest(`column_mapping: sheet ${sheet} has no column ${source}.`);
}

function unique(columns: ColumnPlan[]): void {
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c.name)) throw badRequest(`column_mapping: two columns of the file go to ${c.name}.`);
    seen.add(c.name);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
