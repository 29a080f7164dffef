import type { Executor } from '../../db/index.js';

const CHUNK = 400;

/**
 * Records "fired for this deadline" for each (row, deadline) of a near_deadline automation; returns the
 * rows not yet recorded. The primary key makes a row fire once per deadline value across runs,
 * restarts and instances; a changed deadline is a new mark, so the row fires again.
 */
export async function claimDeadlines(db: Executor, ruleId: number, marks: Array<{ rowId: string; mark: string }>, now: number): Promise<Set<string>> {
  const claimed = new Set<string>();
  for (let i = 0; i < marks.length; i += CHUNK) {
    const values = marks.slice(i, i + CHUNK).map((m) => ({ rule_id: ruleId, row_id: m.rowId, mark: m.mark, at: now }));
    const rows = await db
      .insertInto('automation_marks')
      .values(values)
      .onConflict((oc) => oc.columns(['rule_id', 'row_id', 'mark']).doNothing())
      .returning('row_id')
      .execute();
    for (const r of rows) claimed.add(r.row_id);
  }
  return claimed;
}

/** Take claims back (rows that could not be run this time). */
export async function releaseDeadlines(db: Executor, ruleId: number, marks: Array<{ rowId: string; mark: string }>): Promise<void> {
  for (const m of marks) {
    await db.deleteFrom('automation_marks').where('rule_id', '=', ruleId).where('row_id', '=', m.rowId).where('mark', '=', m.mark).execute();
  }
}

/** Forget marks older than `before` (their deadlines lie far in the past). */
export async function pruneAutomationMarks(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('automation_marks').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
