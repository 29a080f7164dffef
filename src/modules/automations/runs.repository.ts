import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { AutomationRunsTable } from './automations.table.js';

export type RunRow = Selectable<AutomationRunsTable>;
export type NewRun = Insertable<AutomationRunsTable>;

export async function insertRuns(db: Executor, runs: NewRun[]): Promise<void> {
  // Chunked: a batch of changes may fire many runs.
  for (let i = 0; i < runs.length; i += 200) await db.insertInto('automation_runs').values(runs.slice(i, i + 200)).execute();
}

/** Runs of a base created since `since` (the per-minute budget); dropped triggers do not count. */
export async function countBaseRunsSince(db: Executor, baseId: number, since: number): Promise<number> {
  const row = await db
    .selectFrom('automation_runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .where('created_at', '>=', since)
    .where('status', '!=', 'skipped')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function dueRunIds(db: Executor, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('automation_runs')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/**
 * Takes a due run for `leaseMs` by moving its next attempt on; true only for the caller whose update
 * won, so two instances never run the same attempt. A crashed runner's lease simply expires.
 */
export async function claimRun(db: Executor, id: number, now: number, leaseMs: number): Promise<RunRow | undefined> {
  const result = await db
    .updateTable('automation_runs')
    .set({ next_attempt_at: now + leaseMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return db.selectFrom('automation_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateRun(db: Executor, id: number, patch: Updateable<AutomationRunsTable>): Promise<void> {
  await db.updateTable('automation_runs').set(patch).where('id', '=', id).execute();
}

export function findRun(db: Executor, id: number): Promise<RunRow | undefined> {
  return db.selectFrom('automation_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listRuleRuns(db: Executor, ruleId: number, offset: number, limit: number): Promise<RunRow[]> {
  return db.selectFrom('automation_runs').selectAll().where('rule_id', '=', ruleId).orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

export async function countRuleRuns(db: Executor, ruleId: number): Promise<number> {
  const row = await db.selectFrom('automation_runs').select((eb) => eb.fn.countAll<number>().as('n')).where('rule_id', '=', ruleId).executeTakeFirstOrThrow();
  return Number(row.n);
}
