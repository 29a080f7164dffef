import type { ChangeEvent } from '../events/index.js';
import { presentCell } from '../../shared/dates/index.js';
import { linkOperation } from './link-operations.js';
import { origin } from './operation-origin.js';

/** An operation object as the original's `dtable-store` applies it (`op_type` plus its attributes). */
export type Operation = { op_type: string } & Record<string, unknown>;

/**
 * The events of one write that become one operation: the rows one write inserted (or modified, or
 * deleted) in one table, or the link changes it made through one link.
 */
export type ChangeGroup = ChangeEvent[];

type Kind = 'insert' | 'modify' | 'delete' | 'link';

function kindOf(event: ChangeEvent): Kind {
  if (event.opType === 'insert_row') return 'insert';
  if (event.opType === 'modify_row') return 'modify';
  if (event.opType === 'delete_row') return 'delete';
  return 'link';
}

function linkIdOf(event: ChangeEvent): string | undefined {
  return (event.rowData[0]?.column_data as { link_id?: string } | null | undefined)?.link_id;
}

/** Same write, same kind, same table (links: same link, whichever side). */
export function together(a: ChangeEvent, b: ChangeEvent): boolean {
  if (!a.writeId || a.writeId !== b.writeId || a.baseUuid !== b.baseUuid) return false;
  const kind = kindOf(a);
  if (kind !== kindOf(b)) return false;
  return kind === 'link' ? linkIdOf(a) === linkIdOf(b) : a.tableId === b.tableId;
}

/**
 * Splits events (in commit order) into the groups sent as one operation each. The events of one write
 * are consecutive (appended in one statement under the commit lock); events from before `write_id`
 * was kept are groups of one.
 */
export function groupWrites(events: ChangeEvent[]): ChangeGroup[] {
  const groups: ChangeGroup[] = [];
  let current: ChangeGroup | null = null;
  for (const event of events) {
    if (current && together(current[current.length - 1]!, event)) current.push(event);
    else groups.push((current = [event]));
  }
  return groups;
}

/** True for a group of inserted rows: its operation needs the row the first one follows (`anchorOf`). */
export function isInsertGroup(group: ChangeGroup): boolean {
  return kindOf(group[0]!) === 'insert';
}

function rowOrigin(group: ChangeGroup) {
  const first = group[0]!;
  return group.length === 1 ? { ...origin(first), table_name: first.tableName, row_name: first.rowName } : { ...origin(first), table_name: first.tableName };
}

function oldCells(event: ChangeEvent): Record<string, unknown> {
  const old: Record<string, unknown> = {};
  for (const item of event.rowData) old[item.column_key] = presentCell(item.column_type, item.column_data, item.old_value);
  return old;
}

function newCells(event: ChangeEvent): Record<string, unknown> {
  const updated: Record<string, unknown> = {};
  for (const item of event.rowData) updated[item.column_key] = presentCell(item.column_type, item.column_data, item.value);
  return updated;
}

/** The inserted row as the whole-base read shows it: its date cells presented (the event's cells name their types). */
function insertedRow(event: ChangeEvent): Record<string, unknown> {
  const row: Record<string, unknown> = { ...event.row };
  for (const item of event.rowData) if (item.column_key in row) row[item.column_key] = presentCell(item.column_type, item.column_data, row[item.column_key]);
  return row;
}

/**
 * The `update-dtable` operation for one group, or null for one with none. Rows are keyed by column key,
 * as in the whole-base read, so `dtable-store` applies them as they are. `anchor` (inserts only) is the
 * row the first inserted row follows in the whole-base read ('' when it is the table's first).
 * (Structure changes come as operations already: rows/structure-ops.ts, events/structure-events.ts.)
 */
export function toOperation(group: ChangeGroup, anchor = ''): Operation | null {
  const first = group[0]!;
  const table_id = first.tableId;
  switch (kindOf(first)) {
    case 'insert': {
      const rows = group.map(insertedRow);
      // Appended: each row goes below the one before it (dtable-store's own insertRows chains them so).
      if (group.length === 1) {
        return { op_type: 'insert_row', table_id, row_id: anchor, row_insert_position: 'insert_below', row_data: rows[0], links_data: [], ...rowOrigin(group) };
      }
      const row_ids = [anchor, ...group.slice(0, -1).map((event) => event.rowId)];
      return { op_type: 'insert_rows', table_id, row_ids, row_insert_position: 'insert_below', row_datas: rows, links_data: [], ...rowOrigin(group) };
    }
    case 'modify':
      if (group.length === 1) return { op_type: 'modify_row', table_id, row_id: first.rowId, updated: newCells(first), old_row: oldCells(first), ...rowOrigin(group) };
      return {
        op_type: 'modify_rows',
        table_id,
        row_ids: group.map((event) => event.rowId),
        updated: Object.fromEntries(group.map((event) => [event.rowId, newCells(event)])),
        old_rows: Object.fromEntries(group.map((event) => [event.rowId, oldCells(event)])),
        ...rowOrigin(group),
      };
    case 'delete': {
      const deleted = (event: ChangeEvent) => ({ _id: event.rowId, ...oldCells(event) });
      // The row above is not kept with the event: '' (dtable-store uses it only to undo).
      if (group.length === 1) {
        return { op_type: 'delete_row', table_id, row_id: first.rowId, deleted_row: deleted(first), upper_row_id: '', deleted_links_data: {}, ...rowOrigin(group) };
      }
      return {
        op_type: 'delete_rows',
        table_id,
        row_ids: group.map((event) => event.rowId),
        deleted_rows: group.map(deleted),
        upper_row_ids: group.map(() => ''),
        deleted_links_data: {},
        ...rowOrigin(group),
      };
    }
    case 'link':
      return linkOperation(group);
  }
}
