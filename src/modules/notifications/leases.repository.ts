import type { Executor } from '../../db/index.js';

/**
 * Database leases for scheduled ticks: an instance runs a tick only while it holds the tick's lease,
 * so several scheduler instances never run the same tick at once. A crashed holder's lease expires.
 */
export async function acquireLease(db: Executor, name: string, holder: string, now: number, ttlMs: number): Promise<boolean> {
  const rows = await db
    .insertInto('scheduler_leases')
    .values({ name, holder, lease_until: now + ttlMs, last_started_at: now, last_finished_at: null })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, lease_until: now + ttlMs, last_started_at: now })
        .where((eb) => eb.or([eb('scheduler_leases.lease_until', '<=', now), eb('scheduler_leases.holder', '=', holder)])),
    )
    .returning('holder')
    .execute();
  return rows.length === 1 && rows[0]!.holder === holder;
}

export async function releaseLease(db: Executor, name: string, holder: string, now: number): Promise<void> {
  await db
    .updateTable('scheduler_leases')
    .set({ lease_until: now, last_finished_at: now })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .execute();
}
