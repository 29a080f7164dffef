import type { OpType } from '../events/index.js';

/** Cells by column key (stored values). */
export type Cells = Record<string, unknown>;

/** One row's change in a logged operation; short keys keep the log small. */
export interface LoggedChange {
  /** insert_row, modify_row, delete_row, add_link, remove_link. */
  o: OpType;
  /** Table id. */
  t: string;
  /** Row id. */
  r: string;
  /** Row name (the first column's display text) at the time. */
  n: string;
  /** Before: the changed cells' old values (modify, link), every cell (delete). */
  b?: Cells;
  /** After: the changed cells' new values (modify, link), every cell (insert). */
  a?: Cells;
  /** A deleted row's links by link column key (for a self-link also `<key`: the rows linking to it). */
  l?: Record<string, string[]>;
  /** A deleted row's creator and creation time (ms), put back on restore. */
  c?: [creator: string, ctime: number];
  /** Set when the deleted row was purged from the trash: its cells and links are gone for good. */
  x?: 1;
  /**
   * A new row appended (row-operations.ts, insert-cells.ts): its cells are not copied here (`a` is filled on read from
   * the row, with later logged changes undone) and the row index has no entry for it.
   */
  f?: 1;
}

/** What `operation_log.changes` holds. */
export interface LoggedChanges {
  rows: LoggedChange[];
  /** Table, column and view operations (the live channel's shapes). */
  structure?: Array<Record<string, unknown>>;
}

/** An operation as read back. */
export interface Operation {
  id: number;
  baseId: number;
  writeId: string;
  opType: string;
  tableId: string | null;
  opUser: string;
  opApp: string | null;
  opTime: number;
  rowCount: number;
  changes: LoggedChanges;
  reverts: number | null;
}

/** Which operations a listing wants; all optional. */
export interface OperationFilter {
  tableId?: string;
  /** Only operations on one of these tables (a table-scoped token's); operations spanning tables or none are left out. */
  tableIds?: readonly string[];
  rowId?: string;
  author?: string;
  /** Milliseconds, inclusive. */
  from?: number;
  to?: number;
  /** Keyset: operations with a smaller id only. */
  beforeId?: number;
  /** Operations with a greater id only. */
  afterId?: number;
}
