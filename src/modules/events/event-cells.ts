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
/**
 * `events.row_data` when, in addition, `events.row` holds only the row's cells (its `data`): the row is
 * `{_id: row_id, _ctime, _mtime: op_time as rowTime, _creator, _last_modifier: op_user, ...cells}`.
 */
export const DATA_CELLS = '{"cells":"data"}';

/** A new row's `_ctime`/`_mtime` as events carry them (the rows module's isoMillis; checked on write). */
export function rowTime(ms: number): string {
  // The events of one write share their time: remember the last conversion.
  if (ms !== lastTime) {
    lastTimeText = new Date(ms).toISOString().replace('Z', '+00:00');
    lastTime = ms;
  }
  return lastTimeText;
}

let lastTime = Number.NaN;
let lastTimeText = '';

interface Declared {
  columns: readonly CellColumn[];
  /** The row's stored cells and, when already written, their JSON text. */
  data?: Record<string, unknown>;
  text?: string;
}

const declared = new WeakMap<NewChangeEvent, Declared>();

/**
 * Declare that `event`'s rowData is its row's cells of `columns` (the table's data columns, in order;
 * cells undefined in the row left out; old values null). Pass the same `columns` array for every event
 * of a table in one write. The declaration is checked when the event is stored.
 */
export function cellsOfRow<E extends NewChangeEvent>(event: E, columns: readonly CellColumn[], data?: Record<string, unknown>, text?: string): E {
  declared.set(event, { columns, data, text });
  return event;
}

const ROW_FIELDS = ['_id', '_ctime', '_mtime', '_creator', '_last_modifier'];

/** True when the event's row is exactly what DATA_CELLS rebuilds from `data`. */
function isDataRow(event: NewChangeEvent, data: Record<string, unknown>): boolean {
  const row = event.row!;
  const time = rowTime(event.opTime);
  if (row._id !== event.rowId || row._ctime !== time || row._mtime !== time || row._creator !== event.opUser || row._last_modifier !== event.opUser) return false;
  let i = 0;
  const keys = Object.keys(data);
  for (const key in row) {
    if (i < ROW_FIELDS.length) {
      if (key !== ROW_FIELDS[i]) return false;
    } else {
      const k = keys[i - ROW_FIELDS.length];
      if (key !== k || row[key] !== data[k]) return false;
    }
    i++;
  }
  return i === ROW_FIELDS.length + keys.length;
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
export const DATA_CELLS_VALUE = Object.freeze({ cells: 'data' });

/** How an event is stored: in full, with its cells in its row, or with only its cells in `row`. */
export const Form = { Full: 0, RowCells: 1, DataCells: 2 } as const;
export type Form = (typeof Form)[keyof typeof Form];

export interface EncodedEvents {
  form: Form[];
  /** Per DataCells event: the value `events.row` stores (its cells) and, when known, its JSON text. */
  data: Array<Record<string, unknown> | undefined>;
  text: Array<string | undefined>;
  /** `event_columns` rows of this write: one per table with compact events. */
  columns: Array<{ tableId: string; columns: string }>;
}

/** Insert events of one table in one write from which on they are stored compactly. */
export const MIN_COMPACT = 2;

/** The stored form of a write's events. */
export function encodeEvents(events: NewChangeEvent[]): EncodedEvents {
  const byTable = new Map<string, readonly CellColumn[]>();
  const form: Form[] = new Array(events.length);
  const data: EncodedEvents['data'] = new Array(events.length);
  const text: EncodedEvents['text'] = new Array(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const d = declared.get(e);
    form[i] = Form.Full;
    if (d === undefined) continue;
    const known = byTable.get(e.tableId);
    if ((known !== undefined && known !== d.columns) || !isRowCells(e, d.columns)) continue;
    if (known === undefined) byTable.set(e.tableId, d.columns);
    form[i] = Form.RowCells;
    if (d.data !== undefined && isDataRow(e, d.data)) {
      form[i] = Form.DataCells;
      data[i] = d.data;
      text[i] = d.text;
    }
  }
  // A table's lone insert event stays in full: its columns row would be as large as what it saves.
  const counts = new Map<string, number>();
  for (let i = 0; i < events.length; i++) if (form[i] !== Form.Full) counts.set(events[i]!.tableId, (counts.get(events[i]!.tableId) ?? 0) + 1);
  for (const [tableId, count] of counts) {
    if (count >= MIN_COMPACT) continue;
    byTable.delete(tableId);
    for (let i = 0; i < events.length; i++) if (events[i]!.tableId === tableId) form[i] = Form.Full;
  }
  return {
    form,
    data,
    text,
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

/** The row of a DataCells event from its stored cells. */
export function rowFromData(cells: Record<string, unknown>, rowId: string, opTime: number, opUser: string): Record<string, unknown> {
  const time = rowTime(opTime);
  return { _id: rowId, _ctime: time, _mtime: time, _creator: opUser, _last_modifier: opUser, ...cells };
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
