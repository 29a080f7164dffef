import type { Generated } from 'kysely';

export interface RowCommentsTable {
  id: Generated<number>;
  base_id: number;
  table_id: string;
  row_id: string;
  author_id: number;
  /** The author's virtual id (`…@auth.local`). */
  author: string;
  comment: string;
  resolved: Generated<number>;
  created_at: number;
  updated_at: number;
}
