import type { Executor } from '../../db/index.js';

export interface OverrideRow {
  base_uuid: string;
  per_minute: number;
  updated_at: number;
}

/** Every override with its base's uuid (the table is small: one row per tuned base). */
export async function listOverrides(db: Executor): Promise<OverrideRow[]> {
  const rows = await db
    .selectFrom('rate_limit_overrides')
    .innerJoin('bases', 'bases.id', 'rate_limit_overrides.base_id')
    .select(['bases.uuid as base_uuid', 'rate_limit_overrides.per_minute', 'rate_limit_overrides.updated_at'])
    // A trashed base's override stays (it is back on restore) but is not listed.
    .where('bases.deleted_at', 'is', null)
    .orderBy('bases.uuid')
    .execute();
  return rows.map((r) => ({ base_uuid: r.base_uuid, per_minute: Number(r.per_minute), updated_at: Number(r.updated_at) }));
}

export async function findOverride(db: Executor, baseId: number): Promise<number | null> {
  const row = await db.selectFrom('rate_limit_overrides').select('per_minute').where('base_id', '=', baseId).executeTakeFirst();
  return row ? Number(row.per_minute) : null;
}

export async function upsertOverride(
  db: Executor,
  values: { base_id: number; per_minute: number; updated_by: number | null; updated_at: number },
): Promise<void> {
  await db
    .insertInto('rate_limit_overrides')
    .values(values)
    .onConflict((oc) =>
      oc.column('base_id').doUpdateSet({ per_minute: values.per_minute, updated_by: values.updated_by, updated_at: values.updated_at }),
    )
    .execute();
}

/** Whether a row was deleted. */
export async function deleteOverride(db: Executor, baseId: number): Promise<boolean> {
  const result = await db.deleteFrom('rate_limit_overrides').where('base_id', '=', baseId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
