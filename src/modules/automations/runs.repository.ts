import type { Insertable, Selectable, Updateable } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
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

/**
 * Takes up to `limit` due runs for `leaseMs` in one statement (their next attempt moved on), oldest first.
 * The update re-checks each row's condition, so a run another instance claimed meanwhile is not taken
 * twice (PostgreSQL: the rows another claim holds are skipped, not waited for). A crashed runner's lease expires.
 */
export async function claimDueRuns(db: Executor, dialect: DialectName, now: number, limit: number, leaseMs: number): Promise<RunRow[]> {
  let due = db.selectFrom('automation_runs').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).orderBy('id').limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const rows = await db
    .updateTable('automation_runs')
    .set({ next_attempt_at: now + leaseMs })
    .where('id', 'in', due)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .returningAll()
    .execute();
  return rows.sort((a, b) => Number(a.id) - Number(b.id));
}

/** Renews the lease of claimed runs still held with lease `heldUntil`; answers the ids still held. */
export async function renewLease(db: Executor, ids: number[], heldUntil: number, until: number): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('automation_runs')
    .set({ next_attempt_at: until })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', heldUntil)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => Number(r.id)));
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
