import type { Executor } from '../../db/index.js';
import { newRowId } from './ids.js';
import * as repo from './rows.repository.js';

/** Empty rows a new base starts with, as the original's blank base (clients read its first row). */
export const BLANK_BASE_ROWS = 3;

/** The rows of a new base's `Table1` (id `0000`, from `defaultMetadata`), written in the creating transaction. */
export async function insertBlankBaseRows(trx: Executor, baseId: number, creator: string, now: number): Promise<void> {
  const rows = Array.from({ length: BLANK_BASE_ROWS }, () => ({ _id: newRowId(), _ctime: now, _mtime: now, _creator: creator, _last_modifier: creator, data: {} }));
  await repo.insertRows(trx, baseId, '0000', rows);
}
