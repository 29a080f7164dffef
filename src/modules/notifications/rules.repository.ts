import type { Insertable, InsertObject, Selectable, Updateable } from 'kysely';
import type { Database, DialectName, Executor } from '../../db/index.js';
import type { NotificationRulesTable } from './notifications.table.js';
import { basesWithUpdateRulesIn, deleteRuleIn, findRuleIn, listBaseRulesIn, updateRulesOf, validRulesOfBaseIn } from './rule-store.js';
import type { Rule, RuleAction, RuleTrigger, RunCondition } from './rules.model.js';

export type RuleRow = Selectable<NotificationRulesTable>;
/** A rule row with its creator's nickname, as the API shows it. */
export type RuleListing = RuleRow & { creator_name: string };

export function toRule(row: RuleRow): Rule {
  return {
    id: Number(row.id),
    baseId: Number(row.base_id),
    dtableUuid: row.dtable_uuid,
    runCondition: row.run_condition as RunCondition,
    trigger: JSON.parse(row.trigger) as RuleTrigger,
    action: JSON.parse(row.action) as RuleAction,
    creatorId: Number(row.creator_id),
    ctime: Number(row.ctime),
    lastTriggerTime: row.last_trigger_time === null ? null : Number(row.last_trigger_time),
    isValid: Number(row.is_valid) === 1,
    invalidReason: row.invalid_reason,
    nextRunAt: row.next_run_at === null ? null : Number(row.next_run_at),
  };
}

export type NewRuleRow = Insertable<NotificationRulesTable>;

export async function insertRule(db: Executor, row: InsertObject<Database, 'notification_rules'>): Promise<number> {
  const { id } = await db.insertInto('notification_rules').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateRule(db: Executor, id: number, patch: Updateable<NotificationRulesTable>): Promise<void> {
  await db.updateTable('notification_rules').set(patch).where('id', '=', id).execute();
}

export function deleteRule(db: Executor, id: number): Promise<boolean> {
  return deleteRuleIn(db, 'notification_rules', id);
}

export function findRule(db: Executor, id: number): Promise<RuleListing | undefined> {
  return findRuleIn(db, 'notification_rules', id);
}

export function listBaseRules(db: Executor, baseId: number): Promise<RuleListing[]> {
  return listBaseRulesIn(db, 'notification_rules', baseId);
}

/** Valid per_update rules of the given tables (the engine's only lookup per batch of changes). */
export function updateRulesOfTables(db: Executor, tables: Array<{ baseId: number; tableId: string }>): Promise<RuleRow[]> {
  return updateRulesOf(db, 'notification_rules', tables);
}

export function basesWithUpdateRules(db: Executor, baseIds: number[]): Promise<number[]> {
  return basesWithUpdateRulesIn(db, 'notification_rules', baseIds);
}

export function validRulesOfBase(db: Executor, baseId: number): Promise<RuleRow[]> {
  return validRulesOfBaseIn(db, 'notification_rules', baseId);
}

/** Ids of valid deadline rules whose daily run is due. */
export async function dueDeadlineRuleIds(db: Executor, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('notification_rules')
    .select('id')
    .where('run_condition', '=', 'per_day')
    .where('next_run_at', '<=', now)
    .where('is_valid', '=', 1)
    .orderBy('next_run_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/**
 * The rule, locked for this transaction when it is still due. On PostgreSQL another instance running
 * the same rule makes this return undefined (SKIP LOCKED) instead of waiting.
 */
export async function lockDueRule(trx: Executor, dialect: DialectName, id: number, now: number): Promise<RuleRow | undefined> {
  let query = trx
    .selectFrom('notification_rules')
    .selectAll()
    .where('id', '=', id)
    .where('is_valid', '=', 1)
    .where('next_run_at', '<=', now);
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  return query.executeTakeFirst();
}

/** Marks the rule invalid; true only for the call that changed it (so its creator is told once). */
export async function markInvalid(db: Executor, id: number, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('notification_rules')
    .set({ is_valid: 0, invalid_reason: reason })
    .where('id', '=', id)
    .where('is_valid', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function setLastTriggerTime(db: Executor, ids: number[], at: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('notification_rules').set({ last_trigger_time: at }).where('id', 'in', ids).execute();
}

export async function setNextRunAt(db: Executor, id: number, at: number | null): Promise<void> {
  await db.updateTable('notification_rules').set({ next_run_at: at }).where('id', '=', id).execute();
}

export async function setMetaVersion(db: Executor, ids: number[], version: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('notification_rules').set({ meta_version: version }).where('id', 'in', ids).execute();
}

/** Bases having valid rules last checked against an older metadata version (a structure change since). */
export async function basesWithStaleRules(db: Executor, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('notification_rules')
    .innerJoin('base_metadata', 'base_metadata.base_id', 'notification_rules.base_id')
    .select('notification_rules.base_id')
    .distinct()
    .where('notification_rules.is_valid', '=', 1)
    .whereRef('notification_rules.meta_version', '<>', 'base_metadata.version')
    .orderBy('notification_rules.base_id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.base_id));
}
