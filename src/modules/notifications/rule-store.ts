import type { Selectable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';

/**
 * The queries notification rules and automation rules share: both tables keep `base_id`, `table_id`,
 * `run_condition` and `is_valid` alike, so one query serves either (automations import it).
 */
export type RuleTableName = 'notification_rules' | 'automation_rules';

// Kysely cannot build a query over a union of table names; the columns used here exist in both.
const from = (db: Executor, table: RuleTableName) => db.selectFrom(table as 'notification_rules');

/** Valid per_update rules of the given tables (one lookup per batch of changes). */
export async function updateRulesOf<T extends RuleTableName>(db: Executor, table: T, tables: Array<{ baseId: number; tableId: string }>): Promise<Array<Selectable<Database[T]>>> {
  if (tables.length === 0) return [];
  const wanted = new Set(tables.map((t) => `${t.baseId}:${t.tableId}`));
  const rows = await from(db, table)
    .selectAll()
    .where('base_id', 'in', [...new Set(tables.map((t) => t.baseId))])
    .where('table_id', 'in', [...new Set(tables.map((t) => t.tableId))])
    .where('run_condition', '=', 'per_update')
    .where('is_valid', '=', 1)
    .orderBy('id')
    .execute();
  return rows.filter((r) => wanted.has(`${Number(r.base_id)}:${r.table_id}`)) as unknown as Array<Selectable<Database[T]>>;
}

/** Which of these bases have a valid per_update rule (one indexed lookup; the dispatcher's filter). */
export async function basesWithUpdateRulesIn(db: Executor, table: RuleTableName, baseIds: number[]): Promise<number[]> {
  if (baseIds.length === 0) return [];
  const rows = await from(db, table)
    .select('base_id')
    .distinct()
    .where('base_id', 'in', baseIds)
    .where('run_condition', '=', 'per_update')
    .where('is_valid', '=', 1)
    .execute();
  return rows.map((r) => Number(r.base_id));
}

/** Valid rules of a base, e.g. to re-check them after a share was removed or a column deleted. */
export async function validRulesOfBaseIn<T extends RuleTableName>(db: Executor, table: T, baseId: number): Promise<Array<Selectable<Database[T]>>> {
  const rows = await from(db, table).selectAll().where('base_id', '=', baseId).where('is_valid', '=', 1).orderBy('id').execute();
  return rows as unknown as Array<Selectable<Database[T]>>;
}

/**
 * The admin operations see only rules of bases not in the trash: a trashed base's rules are neither
 * listed, counted nor deleted there (they come back with the base, as its webhooks do).
 */
const ofLiveBase = (db: Executor) => db.selectFrom('bases').select('bases.id').where('bases.deleted_at', 'is', null);

/** How many rules of bases not in the trash there are (only the invalid ones when asked). */
export async function countRulesIn(db: Executor, table: RuleTableName, onlyInvalid: boolean): Promise<number> {
  let query = from(db, table).select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', 'in', ofLiveBase(db));
  if (onlyInvalid) query = query.where('is_valid', '=', 0);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** Delete every invalid rule of the bases not in the trash; answers how many. */
export async function deleteInvalidRulesIn(db: Executor, table: RuleTableName): Promise<number> {
  const result = await db.deleteFrom(table as 'notification_rules').where('is_valid', '=', 0).where('base_id', 'in', ofLiveBase(db)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Rules with their creator's nickname, as the API shows them. */
export type RuleListingOf<T extends RuleTableName> = Selectable<Database[T]> & { creator_name: string };

function listingOf(db: Executor, table: RuleTableName) {
  const t = table as 'notification_rules';
  return db.selectFrom(t).innerJoin('users', 'users.id', `${t}.creator_id`).selectAll(t).select('users.name as creator_name');
}

/** One rule with its creator's nickname. */
export async function findRuleIn<T extends RuleTableName>(db: Executor, table: T, id: number): Promise<RuleListingOf<T> | undefined> {
  const t = table as 'notification_rules';
  return (await listingOf(db, table).where(`${t}.id`, '=', id).executeTakeFirst()) as RuleListingOf<T> | undefined;
}

/** A base's rules with their creators, in id order. */
export async function listBaseRulesIn<T extends RuleTableName>(db: Executor, table: T, baseId: number): Promise<Array<RuleListingOf<T>>> {
  const t = table as 'notification_rules';
  return (await listingOf(db, table).where(`${t}.base_id`, '=', baseId).orderBy(`${t}.id`).execute()) as Array<RuleListingOf<T>>;
}

/** Every rule of the bases not in the trash (or only invalid ones), newest first, for the system admin. */
export async function listAllRulesIn<T extends RuleTableName>(db: Executor, table: T, onlyInvalid: boolean, offset: number, limit: number): Promise<Array<RuleListingOf<T>>> {
  const t = table as 'notification_rules';
  let query = listingOf(db, table).where(`${t}.base_id`, 'in', ofLiveBase(db));
  if (onlyInvalid) query = query.where(`${t}.is_valid`, '=', 0);
  return (await query.orderBy(`${t}.ctime`, 'desc').orderBy(`${t}.id`, 'desc').offset(offset).limit(limit).execute()) as Array<RuleListingOf<T>>;
}

/** Delete one rule; false when there was none. */
export async function deleteRuleIn(db: Executor, table: RuleTableName, id: number): Promise<boolean> {
  const result = await db.deleteFrom(table as 'notification_rules').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The admin's delete of one rule: only of a base not in the trash; false when there was none. */
export async function deleteLiveRuleIn(db: Executor, table: RuleTableName, id: number): Promise<boolean> {
  const result = await db.deleteFrom(table as 'notification_rules').where('id', '=', id).where('base_id', 'in', ofLiveBase(db)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
