import type { ColumnType, Generated } from 'kysely';

export interface BaseRowsTable {
  id: Generated<number>;
  base_id: number;
  table_id: string;
  /** 22 url-safe characters, unique within the base. */
  row_id: string;
  /** Cells keyed by column key: a JSON string on SQLite, a parsed JSONB object on PostgreSQL; written as a JSON string. */
  data: ColumnType<unknown, string, string>;
  ctime: number;
  mtime: number;
  /** User virtual id, or the app_name of the API-Token that wrote it. */
  creator: string;
  last_modifier: string;
}

/** One link between two records. `row_id` is on the link column's `table_id` side, `other_row_id` on `other_table_id`. */
export interface BaseLinksTable {
  id: Generated<number>;
  base_id: number;
  link_id: string;
  row_id: string;
  other_row_id: string;
  ctime: number;
}

/** An expression index on `base_rows` for one table's cells of one column (row-indexes.ts). */
export interface RowIndexesTable {
  id: Generated<number>;
  name: string;
  base_id: number;
  table_id: string;
  column_key: string;
  /** 'filter', 'asc' or 'desc': which queries the index's order serves. */
  kind: string;
  /** 'number' or 'text': the expression the index is built on (cell-sql.ts). */
  value_type: string;
  created_at: number;
}

/** A cell change of a multi-batch write kept until the write is published (migration 0035, held-writes.ts). */
export interface HeldUpdatesTable {
  id: Generated<number>;
  hold_id: string;
  table_id: string;
  row_id: string;
  /** The new cells by column name, as the rows API's update takes them (JSON). */
  cells: string;
  created_at: number;
}
