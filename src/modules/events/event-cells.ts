import type { CellColumn, NewChangeEvent, RowDataItem } from './events.types.js';

/**
 * Compact storage of insert events. An insert event's `rowData` is the row's own cells, each with its
 * column's key, name, type and data and `old_value` null: for a 1,000-row append that is the row a
 * second time plus the column metadata a thousand times, several times the size of the rows. Such an
 * event is stored with its cells only in `events.row` and `row_data` = ROW_CELLS; the columns go once
 * per write and table into `event_columns`, and `rowFromColumns` rebuilds the very same `rowData` on
 * read. Any event that is not exactly that shape (checked value by value) is stored in full.
 */

/** `events.row_data` of an event whose cells are its row's cells of the write's `event_columns`. */
export const ROW_CELLS = '{"cells":"row"}';

const declared = new WeakMap<NewChangeEvent, readonly CellColumn[]>();

/**
 * Declare that `event`'s rowData is its row's cells of `columns` (the table's data columns, in order;
 * cells undefined in the row left out; old values null). Pass the same `columns` array for every event
 * of a table in one write. The declaration is checked when the event is stored.
 */
export function cellsOfRow<E extends NewChangeEvent>(event: E, columns: readonly CellColumn[]): E {
  declared.set(event, columns);
  return event;
}

/** True when `rowData` is exactly what `rowFromColumns(columns, row)` rebuilds. */
function isRowCells(event: NewChangeEvent, columns: readonly CellColumn[]): boolean {
  const row = event.row;
  if (event.opType !== 'insert_row' || row === null) return false;
  const items = event.rowData;
  let i = 0;
  for (const c of columns) {
    const value = row[c.column_key];
    if (value === undefined) continue;
    const item = items[i++];
    if (
      item === undefined ||
      item.column_key !== c.column_key ||
      item.value !== value ||
      item.old_value !== null ||
      item.column_name !== c.column_name ||
      item.column_type !== c.column_type ||
      item.column_data !== c.column_data
    ) {
      return false;
    }
  }
  return i === items.length;
}

/** ROW_CELLS as the value JSON.stringify writes as that text. */
export const ROW_CELLS_VALUE = Object.freeze({ cells: 'row' });

export interface EncodedEvents {
  /** Per event: true when stored compactly (`row_data` = ROW_CELLS). */
  compact: boolean[];
  /** `event_columns` rows of this write: one per table with compact events. */
  columns: Array<{ tableId: string; columns: string }>;
}

/** The stored form of a write's events. */
export function encodeEvents(events: NewChangeEvent[]): EncodedEvents {
  const byTable = new Map<string, readonly CellColumn[]>();
  const compact: boolean[] = new Array(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const columns = declared.get(e);
    let ok = false;
    if (columns !== undefined) {
      const known = byTable.get(e.tableId);
      if (known === undefined || known === columns) {
        ok = isRowCells(e, columns);
        if (ok && known === undefined) byTable.set(e.tableId, columns);
      }
    }
    compact[i] = ok;
  }
  return {
    compact,
    columns: [...byTable].map(([tableId, cols]) => ({
      tableId,
      columns: JSON.stringify(cols.map((c) => [c.column_key, c.column_name, c.column_type, c.column_data])),
    })),
  };
}

/** A parsed `event_columns.columns`: each column with its data kept as text (every cell gets its own copy). */
export interface StoredColumns {
  columns: Array<{ key: string; name: string; type: string; data: string | null }>;
}

export function parseColumns(text: string): StoredColumns {
  const list = JSON.parse(text) as Array<[string, string, string, unknown]>;
  return { columns: list.map(([key, name, type, data]) => ({ key, name, type, data: data === null ? null : JSON.stringify(data) })) };
}

/** Own copy of a JSON value (the row and its cells must not share objects, as when both were parsed). */
function copy(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value;
}

/** The `rowData` of a compactly stored insert event, from its row. */
export function rowFromColumns(stored: StoredColumns, row: Record<string, unknown>): RowDataItem[] {
  const items: RowDataItem[] = [];
  for (const c of stored.columns) {
    const value = row[c.key];
    if (value === undefined) continue;
    items.push({
      column_key: c.key,
      column_name: c.name,
      column_type: c.type,
      column_data: c.data === null ? null : JSON.parse(c.data),
      value: copy(value),
      old_value: null,
    });
  }
  return items;
}
