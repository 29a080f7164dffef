import type { Generated } from 'kysely';

export interface EventsTable {
  /** Monotonic: ids become visible in id order (see events.repository.ts). */
  id: Generated<number>;
  base_id: number;
  base_uuid: string;
  table_id: string;
  table_name: string;
  row_id: string;
  row_name: string;
  op_type: string;
  op_user: string;
  op_app: string | null;
  op_time: number;
  /** JSON array of RowDataItem. */
  row_data: string;
  /** JSON object of the row after the change, or null after a delete. */
  row: string | null;
  created_at: number;
  /** Shared by the events of one write (one transaction); null on events from before it was kept. */
  write_id: string | null;
}

/** The columns of a write's compactly stored insert events (migration 0018, event-cells.ts). */
export interface EventColumnsTable {
  write_id: string;
  table_id: string;
  /** JSON array of [column_key, column_name, column_type, column_data]. */
  columns: string;
  created_at: number;
}

export interface EventConsumersTable {
  name: string;
  last_event_id: number;
  updated_at: number;
}

export interface StructureEventsTable {
  id: Generated<number>;
  base_id: number;
  base_uuid: string;
  /** The highest `events` id committed before this change: it goes after that event and before the next. */
  after_event_id: number;
  /** JSON operation object (`op_type`, `table_id`, …). */
  op: string;
  op_user: string;
  op_app: string | null;
  op_time: number;
  created_at: number;
}
