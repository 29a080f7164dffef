import type { InsertObject, Selectable, Updateable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';
import type { AutomationRulesTable } from './automations.table.js';
import { basesWithUpdateRulesIn, countRulesIn, deleteInvalidRulesIn, updateRulesOf, validRulesOfBaseIn } from '../notifications/index.js';
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

function listing(db: Executor) {
  return db
    .selectFrom('automation_rules')
    .innerJoin('users', 'users.id', 'automation_rules.creator_id')
    .selectAll('automation_rules')
    .select('users.name as creator_name');
}

export async function insertAutomation(db: Executor, row: InsertObject<Database, 'automation_rules'>): Promise<number> {
  const { id } = await db.insertInto('automation_rules').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateAutomation(db: Executor, id: number, patch: Updateable<AutomationRulesTable>): Promise<void> {
  await db.updateTable('automation_rules').set(patch).where('id', '=', id).execute();
}

export async function deleteAutomation(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('automation_rules').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export function findAutomation(db: Executor, id: number): Promise<AutomationListing | undefined> {
  return listing(db).where('automation_rules.id', '=', id).executeTakeFirst();
}

export function listBaseAutomations(db: Executor, baseId: number): Promise<AutomationListing[]> {
  return listing(db).where('automation_rules.base_id', '=', baseId).orderBy('automation_rules.id').execute();
}

export async function countBaseAutomations(db: Executor, baseId: number): Promise<number> {
  const row = await db.selectFrom('automation_rules').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', baseId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listAllAutomations(db: Executor, onlyInvalid: boolean, offset: number, limit: number): Promise<AutomationListing[]> {
  let query = listing(db);
  if (onlyInvalid) query = query.where('automation_rules.is_valid', '=', 0);
  return query.orderBy('automation_rules.ctime', 'desc').orderBy('automation_rules.id', 'desc').offset(offset).limit(limit).execute();
}

export function countAutomations(db: Executor, onlyInvalid: boolean): Promise<number> {
  return countRulesIn(db, 'automation_rules', onlyInvalid);
}

export function deleteInvalidAutomations(db: Executor): Promise<number> {
  return deleteInvalidRulesIn(db, 'automation_rules');
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
