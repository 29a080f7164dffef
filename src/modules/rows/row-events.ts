import { cellsOfRow, type CellColumn, type NewChangeEvent, type OpType, type RowDataItem } from '../events/index.js';
import type { Actor, BaseRef } from './base-writer.js';
import { COMPUTED_TYPES } from './column-types.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import { displayText, rowByKeys, type StoredRow } from './present.js';

/** Columns whose values live in a row's `data` (formula cells are materialized there too). */
function dataColumns(table: TableMeta): ColumnMeta[] {
  return table.columns.filter((c) => c.type !== 'link' && (c.type === 'formula' || c.type === 'link-formula' || !COMPUTED_TYPES.includes(c.type)));
}

function item(column: ColumnMeta, value: unknown, oldValue: unknown): RowDataItem {
  return {
    column_key: column.key,
    column_name: column.name,
    column_type: column.type,
    column_data: column.data ?? null,
    value: value === undefined ? null : value,
    old_value: oldValue === undefined ? null : oldValue,
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function event(base: BaseRef, table: TableMeta, row: StoredRow, op: OpType, actor: Actor, now: number, rowData: RowDataItem[], after: Record<string, unknown> | null): NewChangeEvent {
  return {
    baseId: base.id,
    baseUuid: base.uuid,
    tableId: table._id,
    tableName: table.name,
    rowId: row._id,
    rowName: displayText(table.columns[0], row),
    opType: op,
    opUser: actor.user,
    opApp: actor.app,
    opTime: now,
    rowData,
    row: after,
  };
}

export function insertEvent(base: BaseRef, table: TableMeta, row: StoredRow, actor: Actor, now: number): NewChangeEvent {
  return insertEvents(base, table, [row], actor, now)[0]!;
}

/**
 * The insert events of new rows of one table (after their cells are final). Each event's cells are its
 * row's cells, so it is declared as such: the outbox stores the cells once (events/event-cells.ts).
 * `dataTexts`: each row's `data` as JSON text when the caller already wrote it (SQLite rows insert).
 */
export function insertEvents(base: BaseRef, table: TableMeta, rows: StoredRow[], actor: Actor, now: number, dataTexts?: string[]): NewChangeEvent[] {
  const columns = dataColumns(table);
  const cells: CellColumn[] = columns.map((c) => ({ column_key: c.key, column_name: c.name, column_type: c.type, column_data: c.data ?? null }));
  return rows.map((row, i) => {
    const rowData: RowDataItem[] = [];
    for (const c of cells) {
      const value = row.data[c.column_key];
      if (value === undefined) continue;
      rowData.push({ column_key: c.column_key, column_name: c.column_name, column_type: c.column_type, column_data: c.column_data, value, old_value: null });
    }
    return cellsOfRow(event(base, table, row, 'insert_row', actor, now, rowData, rowByKeys(row)), cells, row.data, dataTexts?.[i]);
  });
}

/** The modify event for the cells that differ, or null when nothing changed. */
export function modifyEvent(base: BaseRef, table: TableMeta, before: StoredRow, after: StoredRow, actor: Actor, now: number): NewChangeEvent | null {
  const cells = dataColumns(table)
    .filter((c) => !sameValue(before.data[c.key], after.data[c.key]))
    .map((c) => item(c, after.data[c.key], before.data[c.key]));
  return cells.length === 0 ? null : event(base, table, after, 'modify_row', actor, now, cells, rowByKeys(after));
}

/** `links`: the row's links by link column key, for the operation log (not stored in the outbox). */
export function deleteEvent(base: BaseRef, table: TableMeta, row: StoredRow, actor: Actor, now: number, links?: Record<string, string[]>): NewChangeEvent {
  const cells = dataColumns(table)
    .filter((c) => row.data[c.key] !== undefined)
    .map((c) => item(c, null, row.data[c.key]));
  const deleted: NewChangeEvent = { ...event(base, table, row, 'delete_row', actor, now, cells, null), origin: { creator: row._creator, ctime: row._ctime } };
  return links ? { ...deleted, links } : deleted;
}

/** A row's link cell changed from `before` to `after` (linked row ids). */
export function linkEvent(
  base: BaseRef,
  table: TableMeta,
  row: StoredRow,
  column: ColumnMeta,
  before: string[],
  after: string[],
  actor: Actor,
  now: number,
): NewChangeEvent {
  const op: OpType = after.some((id) => !before.includes(id)) ? 'add_link' : 'remove_link';
  return event(base, table, row, op, actor, now, [item(column, after, before)], { ...rowByKeys(row), [column.key]: after });
}

/** Same values, same keys: used to skip no-op updates. */
export function sameCells(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (!sameValue(a[key], b[key])) return false;
  return true;
}
