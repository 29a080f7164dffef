import type { Executor } from '../../db/index.js';

/** The mark of per_update rules: when the rule last fired for the row. */
export const UPDATE_MARK = 'update';
const CHUNK = 400;

export interface WindowClaim {
  ruleId: number;
  rowId: string;
  /** When the rule fired for the row (the change's time). */
  at: number;
}

/**
 * Claims the (rule, row) de-duplication windows of a batch, in order: a claim succeeds when the rule
 * has not fired for the row within `windowMs` before it (earlier claims of the same batch count), and
 * a success records its time. A few set-based queries per batch, not per change. Runs inside the
 * dispatcher's transaction, which holds the consumer lock, so no other instance races it.
 */
export async function claimUpdateWindows(db: Executor, claims: WindowClaim[], windowMs: number): Promise<boolean[]> {
  if (claims.length === 0) return [];
  const key = (ruleId: number, rowId: string) => `${ruleId}:${rowId}`;
  const last = new Map<string, number>();
  if (windowMs > 0) {
    const ruleIds = [...new Set(claims.map((c) => c.ruleId))];
    const rowIds = [...new Set(claims.map((c) => c.rowId))];
    for (let r = 0; r < ruleIds.length; r += CHUNK) {
      for (let i = 0; i < rowIds.length; i += CHUNK) {
        const rows = await db
          .selectFrom('notification_rule_marks')
          .select(['rule_id', 'row_id', 'at'])
          .where('mark', '=', UPDATE_MARK)
          .where('rule_id', 'in', ruleIds.slice(r, r + CHUNK))
          .where('row_id', 'in', rowIds.slice(i, i + CHUNK))
          .execute();
        for (const row of rows) last.set(key(Number(row.rule_id), row.row_id), Number(row.at));
      }
    }
  }
  const recorded = new Map<string, { rule_id: number; row_id: string; mark: string; at: number }>();
  const granted = claims.map((c) => {
    const k = key(c.ruleId, c.rowId);
    const previous = last.get(k);
    if (windowMs > 0 && previous !== undefined && previous > c.at - windowMs) return false;
    last.set(k, c.at);
    recorded.set(k, { rule_id: c.ruleId, row_id: c.rowId, mark: UPDATE_MARK, at: c.at });
    return true;
  });
  if (windowMs > 0) {
    const marks = [...recorded.values()];
    for (let i = 0; i < marks.length; i += CHUNK) {
      await db
        .insertInto('notification_rule_marks')
        .values(marks.slice(i, i + CHUNK))
        .onConflict((oc) => oc.columns(['rule_id', 'row_id', 'mark']).doUpdateSet((eb) => ({ at: eb.ref('excluded.at') })))
        .execute();
    }
  }
  return granted;
}

/**
 * Records "reminded on `day`" for each row; returns the rows that were not yet recorded. The primary
 * key makes this exactly-once per rule, row and day across runs, restarts and instances.
 */
export async function claimDay(db: Executor, ruleId: number, rowIds: string[], day: string, now: number): Promise<string[]> {
  const claimed: string[] = [];
  for (let i = 0; i < rowIds.length; i += CHUNK) {
    const values = rowIds.slice(i, i + CHUNK).map((rowId) => ({ rule_id: ruleId, row_id: rowId, mark: day, at: now }));
    const rows = await db
      .insertInto('notification_rule_marks')
      .values(values)
      .onConflict((oc) => oc.columns(['rule_id', 'row_id', 'mark']).doNothing())
      .returning('row_id')
      .execute();
    for (const r of rows) claimed.push(r.row_id);
  }
  return claimed;
}

/** Forget marks older than `before` (both kinds have served their purpose by then). */
export async function pruneMarks(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('notification_rule_marks').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
