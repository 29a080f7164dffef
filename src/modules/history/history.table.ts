import type { Generated } from 'kysely';

/** One write to a base (migration 0019_history). */
export interface OperationLogTable {
  id: Generated<number>;
  base_id: number;
  /** The write's id, shared with its change events. */
  write_id: string;
  /** insert_row(s), modify_row(s), delete_row(s), update_links, structure, batch (mixed). */
  op_type: string;
  /** The table when the write touched one table only. */
  table_id: string | null;
  op_user: string;
  op_app: string | null;
  op_time: number;
  row_count: number;
  /** JSON: { rows: LoggedChange[], structure?: object[] } (history.types.ts). */
  changes: string;
  /** The operation this write reverted (restore-operations), else null. */
  reverts: number | null;
  /** SQLite: the key of the one row a single-row change touched, until its row-index entry is written in a batch (row-index.ts); else null. */
  row_key: number | null;
}

/** The row index of the log: one entry per row an operation touched, the row by its key (shared/row-key.ts). */
export interface OperationLogRowsTable {
  base_id: number;
  row_key: number;
  op_id: number;
}

/** SQLite: every operation up to `indexed_to` has its row-index entries (one row, id 1; migration 0043). */
export interface OperationLogIndexedTable {
  id: number;
  indexed_to: number;
}

/** A deleted table in the trash (migration 0030): `meta` is JSON { table, linkColumns } (table-trash.ts). */
export interface TrashedTablesTable {
  id: Generated<number>;
  base_id: number;
  table_id: string;
  table_name: string;
  deleted_by: string;
  deleted_at: number;
  row_count: number;
  meta: string;
}

/** One row of a trashed table: JSON { row: stored row, links: by link column key }. */
export interface TrashedTableRowsTable {
  id: Generated<number>;
  trash_id: number;
  row_id: string;
  data: string;
}

/** A snapshot of a base: its whole-base archive (export-dtable zip, no files) at `revision`. */
export interface BaseSnapshotsTable {
  id: Generated<number>;
  base_id: number;
  /** 40 hex characters, as the original's commit ids. */
  commit_id: string;
  created_at: number;
  revision: number;
  base_name: string;
  size: number;
  archive: Buffer;
}

/** One file a snapshot keeps (migration 0038): its path in the base and the blob holding its bytes. */
export interface SnapshotFilesTable {
  id: Generated<number>;
  snapshot_id: number;
  path: string;
  sha256: string;
  size: number;
  /** The stored object's change time when it was kept (an unchanged file is not read again). */
  modified: number;
}

/** A content-addressed copy of a file in the asset storage (`snapshot-blobs/…/<sha256>`). */
export interface SnapshotBlobsTable {
  sha256: string;
  size: number;
  /** Last time a snapshot took it: garbage collection spares blobs used within a day. */
  used_at: number;
}
