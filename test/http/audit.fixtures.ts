import { expect } from 'vitest';
import type { TestApp } from '../helpers/index.js';

/** Drops the chain as retention pruning would (the anchor moves to the head): verify starts clean. */
export async function restartAuditChain(t: TestApp): Promise<void> {
  const { db, audit } = t.container;
  await audit.seal();
  await db.deleteFrom('audit_log').execute();
  const head = await db.selectFrom('audit_head').select(['seq', 'hash']).where('id', '=', 1).executeTakeFirstOrThrow();
  await db.updateTable('audit_head').set({ anchor_seq: head.seq, anchor_hash: head.hash }).where('id', '=', 1).execute();
  await db.deleteFrom('audit_pending').execute();
  await db.updateTable('audit_writers').set((eb) => ({ sealed: eb.ref('appended') })).execute();
  expect(await audit.verify()).toMatchObject({ ok: true, rows: 0, pending: 0 });
}

/**
 * Deletes the audit row of `action` where it is now: pending (PostgreSQL, unless a seal timer was
 * quicker) or chained. Tried as pending first, in one step each: a seal between a look and the delete
 * would leave the row in place.
 */
export async function deleteAuditRow(t: TestApp, action: string): Promise<'pending' | 'chained'> {
  const { db } = t.container;
  const pending = await db.deleteFrom('audit_pending').where('action', '=', action).executeTakeFirst();
  if (Number(pending.numDeletedRows) > 0) return 'pending';
  const chained = await db.deleteFrom('audit_log').where('action', '=', action).executeTakeFirst();
  expect(Number(chained.numDeletedRows)).toBe(1);
  return 'chained';
}

/** Sets the client address of the audit row of `action` where it is now (as `deleteAuditRow` finds it). */
export async function editAuditRow(t: TestApp, action: string, ip: string): Promise<'pending' | 'chained'> {
  const { db } = t.container;
  const pending = await db.updateTable('audit_pending').set({ ip }).where('action', '=', action).executeTakeFirst();
  if (Number(pending.numUpdatedRows) > 0) return 'pending';
  const chained = await db.updateTable('audit_log').set({ ip }).where('action', '=', action).executeTakeFirst();
  expect(Number(chained.numUpdatedRows)).toBe(1);
  return 'chained';
}

/** What verify names for a deleted row: a pending one by its missing count, or by the sealer's marker once a seal ran. */
export const DELETED_REASON = { pending: /missing \(deleted\)|deleted before they were sealed/, chained: /missing \(deleted\)/ } as const;
