import type { DialectName } from '../../db/index.js';
import { filterToSql, parseFilters, type StoredRow } from '../filters/index.js';
import { columnByKey, conjunctionOf, filterColumns, invalidField, matchingRowsPage, tableById, type MetaColumn, type MetaDoc, type MetaTable } from '../notifications/index.js';
import type { ScopedRowWriter } from '../rows/index.js';
import type { AutomationAction } from './model.js';

/**
 * `link_records` (the original's shape: `link_id`, `linked_table_id`, `match_conditions` of
 * `{column_key, other_column_key}`; basegate adds optional `filters` on the linked table): links the
 * triggering row to every row of the linked table whose `other_column_key` cells equal the triggering
 * row's `column_key` cells and that match the filters, through the rows module's link write in the
 * run's transaction.
 */

type Obj = Record<string, unknown>;

/** Rows one run links at most, and rows of the linked table it reads at most to find them. */
export const LINK_LIMITS = { conditions: 10, linkedRows: 1000, scannedRows: 10_000 };
const PAGE = 500;

interface LinkEnd {
  column: MetaColumn;
  /** The table at the other end of the link. */
  other: MetaTable;
}

/** The link column of `table` with this `link_id`, and the table it links to. */
export function linkEnd(doc: MetaDoc, table: MetaTable, linkId: string): LinkEnd | undefined {
  const column = table.columns.find((c) => c.type === 'link' && (c.data as { link_id?: unknown } | null)?.link_id === linkId);
  if (!column) return undefined;
  const data = column.data as { table_id?: unknown; other_table_id?: unknown };
  const otherId = data.table_id === table._id ? data.other_table_id : data.table_id;
  const other = typeof otherId === 'string' ? tableById(doc, otherId) : undefined;
  return other ? { column, other } : undefined;
}

/** Validation of the action's fields; a 400 names the bad field. */
export function linkRecordsFields(a: Obj, where: string, doc: MetaDoc, table: MetaTable): Obj {
  if (typeof a.link_id !== 'string' || a.link_id === '') invalidField(`${where}.link_id`, 'must be the link_id of a link column');
  const end = linkEnd(doc, table, a.link_id as string) ?? invalidField(`${where}.link_id`, `table ${table.name} has no link column with link_id ${String(a.link_id)}`);
  if (a.linked_table_id !== undefined && a.linked_table_id !== null && a.linked_table_id !== '' && a.linked_table_id !== end.other._id) {
    invalidField(`${where}.linked_table_id`, `link ${String(a.link_id)} links to table ${end.other._id}`);
  }
  const raw = a.match_conditions ?? [];
  if (!Array.isArray(raw) || raw.length > LINK_LIMITS.conditions) invalidField(`${where}.match_conditions`, `must be a list of at most ${LINK_LIMITS.conditions} conditions`);
  const conditions = (raw as unknown[]).map((c, i) => {
    const at = `${where}.match_conditions.${i}`;
    const o = (typeof c === 'object' && c !== null ? c : {}) as Obj;
    if (typeof o.column_key !== 'string' || !columnByKey(table, o.column_key)) invalidField(`${at}.column_key`, `column ${String(o.column_key)} not found in table ${table.name}`);
    if (typeof o.other_column_key !== 'string' || !columnByKey(end.other, o.other_column_key)) {
      invalidField(`${at}.other_column_key`, `column ${String(o.other_column_key)} not found in table ${end.other.name}`);
    }
    return { column_key: o.column_key as string, other_column_key: o.other_column_key as string };
  });
  const filters = a.filters ?? [];
  if (!Array.isArray(filters)) invalidField(`${where}.filters`, 'must be a list of filters');
  const conjunction = conjunctionOf(a.filter_conjunction);
  const parsed = parseFilters({ filters, filter_conjunction: conjunction }, filterColumns(end.other));
  if (!parsed.ok) invalidField(`${where}.filters`, parsed.error);
  if (conditions.length === 0 && (filters as unknown[]).length === 0) invalidField(`${where}.match_conditions`, 'give at least one match condition or filter');
  return { link_id: a.link_id, linked_table_id: end.other._id, match_conditions: conditions, filters, filter_conjunction: conjunction };
}

/** Why a stored action no longer fits the base (link or column deleted), or null. */
export function linkRecordsProblem(action: AutomationAction, doc: MetaDoc, table: MetaTable): string | null {
  const end = linkEnd(doc, table, String(action.link_id));
  if (!end) return `the link ${String(action.link_id)} of action ${action._id} was deleted`;
  for (const c of conditions(action)) {
    if (!columnByKey(table, c.column_key)) return `the column ${c.column_key} of action ${action._id} was deleted`;
    if (!columnByKey(end.other, c.other_column_key)) return `the column ${c.other_column_key} of action ${action._id} was deleted`;
  }
  const parsed = parseFilters({ filters: action.filters ?? [], filter_conjunction: action.filter_conjunction ?? 'And' }, filterColumns(end.other));
  return parsed.ok ? null : `the filters of action ${action._id} no longer fit table ${end.other.name}: ${parsed.error}`;
}

export interface LinkInput {
  doc: MetaDoc;
  table: MetaTable;
  row: StoredRow;
  dialect: DialectName;
  now: number;
  timeZone: string;
  /** The rule creator's user id (`include_me` in the filters). */
  currentUser?: string;
}

/** Finds the matching rows (filters in SQL, match conditions per row) and adds the links; returns a summary. */
export async function linkRecords(w: ScopedRowWriter, baseId: number, action: AutomationAction, input: LinkInput): Promise<string> {
  const end = linkEnd(input.doc, input.table, String(action.link_id));
  if (!end) throw new Error(`the link ${String(action.link_id)} was deleted`);
  const wanted = conditions(action).map((c) => ({ other: c.other_column_key, value: comparable(input.row.data[c.column_key]) }));
  // An empty cell of the triggering row matches nothing (as in the original).
  if (wanted.some((c) => c.value === null)) return 'no rows linked: a match column of the row is empty';
  const parsed = parseFilters({ filters: action.filters ?? [], filter_conjunction: action.filter_conjunction ?? 'And' }, filterColumns(end.other));
  if (!parsed.ok) throw new Error(`the filters no longer fit table ${end.other.name}: ${parsed.error}`);
  const where = filterToSql(parsed.filter, { now: input.now, timeZone: input.timeZone, currentUser: input.currentUser }, input.dialect);

  const ids: string[] = [];
  let afterId = 0;
  let scanned = 0;
  while (ids.length < LINK_LIMITS.linkedRows && scanned < LINK_LIMITS.scannedRows) {
    const page = await matchingRowsPage(w.trx, baseId, end.other._id, where, afterId, PAGE);
    if (page.length === 0) break;
    afterId = page[page.length - 1]!.id;
    scanned += page.length;
    for (const { row } of page) {
      if (row._id === input.row._id && end.other._id === input.table._id) continue;
      if (wanted.every((c) => comparable(row.data[c.other]) === c.value)) ids.push(row._id);
      if (ids.length >= LINK_LIMITS.linkedRows) break;
    }
    if (page.length < PAGE) break;
  }
  if (ids.length === 0) return 'no matching rows';
  await w.link({ link_id: String(action.link_id), table_id: input.table._id, other_table_id: end.other._id, other_rows_ids_map: { [input.row._id]: ids } });
  return `${ids.length} rows linked`;
}

function conditions(action: AutomationAction): Array<{ column_key: string; other_column_key: string }> {
  return Array.isArray(action.match_conditions) ? (action.match_conditions as Array<{ column_key: string; other_column_key: string }>) : [];
}

/** A cell as compared by match conditions: text of a scalar, sorted JSON of a list; null when empty. */
function comparable(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (Array.isArray(value)) return value.length === 0 ? null : JSON.stringify(value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).sort());
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).trim();
}
