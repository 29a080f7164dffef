export interface User {
  email: string;
  name: string;
  contact_email: string;
  is_staff: boolean;
  is_active: boolean;
  email_notification: boolean;
  create_time: string;
}

export interface Base {
  id: number;
  workspace_id: number;
  uuid: string;
  name: string;
  creator: string;
  modifier: string;
  created_at: string;
  updated_at: string;
  permission?: string;
  from_user_name?: string;
}

export interface Workspace {
  id: number | string;
  name: string;
  type: string;
  table_list?: Base[];
  shared_table_list?: Base[];
}

export interface SelectOption {
  id: string;
  name: string;
  color?: string;
  textColor?: string;
}

export interface Column {
  key: string;
  name: string;
  type: string;
  width?: number;
  data?: Record<string, unknown> & { options?: SelectOption[] } | null;
}

export interface Filter {
  column_key?: string;
  column_name?: string;
  filter_predicate: string;
  filter_term?: unknown;
  filter_term_modifier?: string;
}

export interface Sort {
  column_key: string;
  sort_type: 'up' | 'down';
}

export interface View {
  _id: string;
  name: string;
  filters: Filter[];
  filter_conjunction: 'And' | 'Or';
  sorts: Sort[];
  /** Keys of the columns this view hides. */
  hidden_columns?: string[];
  /** Group-bys (the console groups by the first). */
  groupbys?: Array<{ column_key: string; sort_type?: 'up' | 'down' }>;
  /** How the console shows the view (basegate's own field; absent: a grid). */
  layout?: { type: string; column_key?: string };
  /** The view's column widths by column key (basegate's own field; absent: the column's width). */
  column_widths?: Record<string, number>;
  /** The view's column order by key (basegate's own field; columns not named follow in the table's order). */
  column_order?: string[];
}

export interface Table {
  _id: string;
  name: string;
  columns: Column[];
  views: View[];
}

export type Row = Record<string, unknown> & { _id: string };
