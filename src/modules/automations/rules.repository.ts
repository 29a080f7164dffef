import type { InsertObject, Selectable, Updateable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';
import type { AutomationRulesTable } from './automations.table.js';
import { basesWithUpdateRulesIn, deleteRuleIn, findRuleIn, listBaseRulesIn, updateRulesOf, validRulesOfBaseIn } from '../notifications/index.js';
import type { AutomationAction, AutomationRule, AutomationRunCondition, AutomationTrigger } from './model.js';

export type AutomationRow = Selectable<AutomationRulesTable>;
export type AutomationListing = AutomationRow & { creator_name: string };

export function toAutomation(row: AutomationRow): AutomationRule {
  return {
    id: Number(row.id),
    baseId: Number(row.base_id),
    dtableUuid: row.dtable_uuid,
    runCondition: row.run_condition as AutomationRunCondition,
    trigger: JSON.parse(row.trigger) as AutomationTrigger,
    actions: JSON.parse(row.actions) as AutomationAction[],
    creatorId: Number(row.creator_id),
    isValid: Number(row.is_valid) === 1,
    nextRunAt: row.next_run_at === null ? null : Number(row.next_run_at),
  };
}

export async function insertAutomation(db: Executor, row: InsertObject<Database, 'automation_rules'>): Promise<number> {
  const { id } = await db.insertInto('automation_rules').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateAutomation(db: Executor, id: number, patch: Updateable<AutomationRulesTable>): Promise<void> {
  await db.updateTable('automation_rules').set(patch).where('id', '=', id).execute();
}

export function deleteAutomation(db: Executor, id: number): Promise<boolean> {
  return deleteRuleIn(db, 'automation_rules', id);
}

export function findAutomation(db: Executor, id: number): Promise<AutomationListing | undefined> {
  return findRuleIn(db, 'automation_rules', id);
}

export function listBaseAutomations(db: Executor, baseId: number): Promise<AutomationListing[]> {
  return listBaseRulesIn(db, 'automation_rules', baseId);
}

export async function countBaseAutomations(db: Executor, baseId: number): Promise<number> {
  const row = await db.selectFrom('automation_rules').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', baseId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Valid per_update rules of the given tables (the consumer's one lookup per batch). */
export function updateAutomationsOfTables(db: Executor, tables: Array<{ baseId: number; tableId: string }>): Promise<AutomationRow[]> {
  return updateRulesOf(db, 'automation_rules', tables);
}

export function basesWithUpdateAutomations(db: Executor, baseIds: number[]): Promise<number[]> {
  return basesWithUpdateRulesIn(db, 'automation_rules', baseIds);
}

export function validAutomationsOfBase(db: Executor, baseId: number): Promise<AutomationRow[]> {
  return validRulesOfBaseIn(db, 'automation_rules', baseId);
}

export async function dueAutomationIds(db: Executor, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('automation_rules')
    .select('id')
    .where('next_run_at', '<=', now)
    .where('is_valid', '=', 1)
    .orderBy('next_run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** Moves a due rule's next run on; true only for the instance whose update won (so a period runs once). */
export async function claimPeriod(db: Executor, id: number, dueAt: number, next: number, now: number): Promise<boolean> {
  if (dueAt > now) return false;
  const result = await db
    .updateTable('automation_rules')
    .set({ next_run_at: next })
    .where('id', '=', id)
    .where('next_run_at', '=', dueAt)
    .where('is_valid', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function markAutomationInvalid(db: Executor, id: number, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('automation_rules')
    .set({ is_valid: 0, invalid_reason: reason })
    .where('id', '=', id)
    .where('is_valid', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countTriggers(db: Executor, counts: Map<number, number>, at: number): Promise<void> {
  for (const [id, n] of counts) {
    await db
      .updateTable('automation_rules')
      .set((eb) => ({ trigger_count: eb('trigger_count', '+', n), last_trigger_time: at }))
      .where('id', '=', id)
      .execute();
  }
}
