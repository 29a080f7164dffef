import type { Executor } from '../../db/index.js';

export type OpType = 'insert_row' | 'modify_row' | 'delete_row' | 'add_link' | 'remove_link';

/** One cell of a change: for modify_row each changed cell; for insert/delete every cell of the row. */
export interface RowDataItem {
  column_key: string;
  column_name: string;
  column_type: string;
  column_data: unknown;
  value: unknown;
  old_value: unknown;
}

/** The column of a cell as an event carries it (a RowDataItem without its values). */
export type CellColumn = Pick<RowDataItem, 'column_key' | 'column_name' | 'column_type' | 'column_data'>;

/** A committed change to one row, as consumers (webhooks, notification rules) receive it. */
export interface ChangeEvent {
  id: number;
  baseId: number;
  baseUuid: string;
  tableId: string;
  tableName: string;
  rowId: string;
  /** Display value of the row's first column ("" when empty). */
  rowName: string;
  opType: OpType;
  /** User virtual id, or the API-Token's app_name. */
  opUser: string;
  opApp: string | null;
  /** Milliseconds since the epoch. */
  opTime: number;
  rowData: RowDataItem[];
  /** The row after the change keyed by column key (with `_id`), or null after a delete. */
  row: Record<string, unknown> | null;
  /** Shared by the events of one write (set when appended; null on events older than it). */
  writeId?: string | null;
  /** A deleted row's links by link column key: seen by the writer's in-transaction hooks only, never stored here. */
  links?: Record<string, string[]>;
  /** A deleted row's creator and creation time (ms), so a restore keeps them: in-transaction hooks only, never stored here. */
  origin?: { creator: string; ctime: number };
}

/** A change about to be written; the id is assigned by the database. */
export type NewChangeEvent = Omit<ChangeEvent, 'id'>;
