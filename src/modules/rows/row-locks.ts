import { apiError, badRequest, notFound } from '../../shared/errors.js';
import { REQUIRED, atLeast, userAccessIn } from '../access/index.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { findTable } from './metadata.js';
import type { StoredRow } from './present.js';
import * as repo from './rows.repository.js';

/**
 * Row locks (`lock-rows/`, `unlock-rows/`). The state lives in the row's stored data under `_locked`
 * and `_locked_by`: column keys are 4 letters/digits, so the names cannot clash with a cell.
 */
export const LOCK_LIMIT = 1000;

type Body = Record<string, unknown>;

export function isLocked(row: StoredRow): boolean {
  return row.data._locked === true;
}

/** `_locked` and `_locked_by` as clients see them (null for a row never locked). */
export function lockFields(row: StoredRow): { _locked: boolean | null; _locked_by: string | null } {
  const locked = row.data._locked;
  const by = row.data._locked_by;
  return { _locked: typeof locked === 'boolean' ? locked : null, _locked_by: typeof by === 'string' ? by : null };
}

/** Owner or admin of the base (asked of the access policy): only they may change locked rows. API-Tokens and links never are. */
async function hasAdminRights(w: WriteScope): Promise<boolean> {
  const userId = w.actor.userId;
  if (userId === undefined) return false;
  return atLeast((await userAccessIn(w.trx, w.base.id, userId)).permission, REQUIRED.changeLockedRows);
}

/**
 * The one check of the write path: updates and deletes (single, batch, SQL) of locked rows are refused
 * whole unless the writer has admin rights on the base.
 */
export async function refuseLockedRows(w: WriteScope, rows: Iterable<StoredRow>): Promise<void> {
  const locked = [...rows].find(isLocked);
  if (!locked) return;
  if (await hasAdminRights(w)) return;
  throw apiError(403, `Row ${locked._id} is locked: only the base's owner and admins may change or delete it.`);
}

export const UNLOCK_REFUSED = "Only the base's owner and admins may unlock rows.";

function lockInput(body: Body): string[] {
  const ids = body.row_ids;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 64)) {
    throw badRequest('row_ids invalid.');
  }
  if (ids.length > LOCK_LIMIT) throw badRequest(`Number of rows to lock exceeds ${LOCK_LIMIT}.`);
  return ids as string[];
}

export class RowLocksService {
  constructor(private readonly writer: BaseWriter) {}

  /**
   * Sets `_locked` and `_locked_by` (the user's id or the API-Token's app) on every row named; unknown rows: 404, nothing changed.
   * Any writer may lock; only the owner and admins may unlock (else a caller stopped by a lock could lift it).
   */
  async set(base: BaseRef, actor: Actor, body: Body, locked: boolean) {
    await this.writer.write(base, actor, (w) => lockRowsIn(w, body, locked));
    return { success: true as const };
  }
}

/** Locks or unlocks rows inside a write that is already open (the endpoint and automation actions). */
export async function lockRowsIn(w: WriteScope, body: Body, locked: boolean): Promise<void> {
  const ids = lockInput(body);
  if (!locked && !(await hasAdminRights(w))) throw apiError(403, UNLOCK_REFUSED);
  const table = findTable(w.meta, body);
  const rows = await repo.findRows(w.trx, w.base.id, table._id, ids);
  const missing = ids.find((id) => !rows.has(id));
  if (missing) throw notFound(`row ${missing} not found`);
  const changed = [...rows.values()].map((r) => ({ rowId: r._id, data: { ...r.data, _locked: locked, _locked_by: w.actor.user } }));
  // A lock is not a cell change: no mtime, no change event.
  await repo.updateRows(w.trx, w.dialect, w.base.id, changed, null);
}
