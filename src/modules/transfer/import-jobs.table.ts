import type { Generated } from 'kysely';

/** An import in progress (migration 0033, import-jobs.ts). */
export interface ImportJobsTable {
  id: Generated<number>;
  hold_id: string;
  base_id: number;
  stage: string;
  kind: string;
  owner: string;
  /** JSON: the importing actor `{user, app, userId}`. */
  actor: string;
  /** JSON list of the table ids the import created. */
  created_tables: string;
  created_base: number;
  started_at: number;
}
