import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from '../../db/index.js';

/**
 * The fields of a changed object the audit log shows as `before`/`after` (issue 33 item 5): what a
 * reviewer needs to see what changed, not bookkeeping (delivery cursors, pacing). Secrets among them
 * (`secret`) are redacted like everything else before a row is written.
 */
const FIELDS = {
  webhooks: ['id', 'url', 'secret', 'is_valid', 'subscription', 'max_rate'],
  notification_rules: ['id', 'table_id', 'run_condition', 'condition', 'trigger', 'action', 'is_valid'],
  automation_rules: ['id', 'table_id', 'run_condition', 'condition', 'trigger', 'actions', 'is_valid'],
} as const;

export type SnapshotTable = keyof typeof FIELDS;
/** Text columns holding JSON: shown as objects. */
const JSON_FIELDS = new Set(['subscription', 'trigger', 'action', 'actions']);

/** The object's audited fields now (read by `run`: the database or the action's transaction), or undefined when it does not exist (or is not of `baseId`). */
export async function snapshotOf(
  db: Db,
  run: (query: CompiledQuery) => Promise<QueryResult<unknown>>,
  table: SnapshotTable,
  id: number,
  baseId: number | null,
): Promise<Record<string, unknown> | undefined> {
  if (!Number.isSafeInteger(id)) return undefined;
  let q = db.selectFrom(table).select([...FIELDS[table]] as never[]).where('id', '=', id);
  if (baseId !== null) q = q.where('base_id', '=', baseId);
  const row = (await run(q.compile())).rows[0] as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (JSON_FIELDS.has(key) && typeof value === 'string') {
      try {
        out[key] = JSON.parse(value);
        continue;
      } catch {
        // not JSON after all: kept as text
      }
    }
    out[key] = value;
  }
  return out;
}
