import type { Executor } from '../../db/index.js';
import { namedIn } from './file-refs.js';

/** Operations read per statement. */
const BATCH = 500;
/** Operations of the base per step of a walk (one step down the (base, id) index finds where it ends). */
export const LOG_FILE_WINDOW = 10_000;
/** Operations a purge on the request path reads at most; the scheduler's tick finishes the walk. */
export const LOG_FILE_SCAN_MAX = 100_000;

/**
 * Where a purge's walk of a base's log stands (kept in the trash entry: a purge that stops resumes here).
 * Operations are read newest first, from `top` (the newest when the walk began) down.
 */
export interface LogScan {
  /** The paths looked for. */
  wanted: string[];
  /** The newest operation when the walk began: newer ones are read at the end (`namedSince`). */
  top: number;
  /** Every operation of the base with `below <= id <= top` has been read. */
  below: number;
  /** The paths those operations name. */
  named: string[];
  /** True once the base's oldest operation was read (or every path was found). */
  done: boolean;
}

/**
 * A walk for `wanted` from the base's newest operation below `ceiling` (those from there on have their
 * files recorded, file-refs.ts: only an older log is walked).
 */
export async function startLogScan(db: Executor, baseId: number, wanted: readonly string[], ceiling = Number.MAX_SAFE_INTEGER): Promise<LogScan> {
  const newest = await db.selectFrom('operation_log').select('id').where('base_id', '=', baseId).where('id', '<', ceiling).orderBy('id', 'desc').limit(1).executeTakeFirst();
  const top = newest === undefined ? 0 : Number(newest.id);
  return { wanted: [...wanted], top, below: top + 1, named: [], done: newest === undefined || wanted.length === 0 };
}

/**
 * Walks on: which of `scan.wanted` values kept in the base's operation log may still name, where a
 * restore can put them back: the cells a deletion kept (the row trash, `restore-operations/`) and the
 * old values of changed cells. Rows of `purgedTableId` are left out (they cannot come back once their
 * table is purged), and so are rows purged from the trash. Reads only operations whose text may name a
 * file (or is compressed), LOG_FILE_WINDOW operations of the base per step, `save`d after each, so a
 * walk that stops resumes there; stops when every path is found, the oldest operation is read, or
 * after `budget` operations (then `done` is false and the walk is to be continued).
 */
export async function continueLogScan(
  db: Executor,
  baseId: number,
  purgedTableId: string,
  scan: LogScan,
  save: (scan: LogScan) => Promise<void>,
  budget = Number.POSITIVE_INFINITY,
): Promise<LogScan> {
  const named = new Set(scan.named);
  let state = scan;
  for (let read = 0; !state.done && read < budget; read += LOG_FILE_WINDOW) {
    // The window's oldest operation: LOG_FILE_WINDOW down the base's index from the last one read.
    const floor = await db
      .selectFrom('operation_log')
      .select('id')
      .where('base_id', '=', baseId)
      .where('id', '<', state.below)
      .orderBy('id', 'desc')
      .offset(LOG_FILE_WINDOW - 1)
      .limit(1)
      .executeTakeFirst();
    const from = floor === undefined ? 0 : Number(floor.id);
    await collectNamed(db, baseId, purgedTableId, new Set(state.wanted), named, from, state.below);
    state = { ...state, below: from, named: [...named], done: floor === undefined || named.size === state.wanted.length };
    await save(state);
  }
  return state;
}

/** Which of `paths` the base's operations newer than `after` (and below `below`) name (the end of a walk: those written during it). */
export async function namedSince(db: Executor, baseId: number, purgedTableId: string, paths: readonly string[], after: number, below = Number.MAX_SAFE_INTEGER): Promise<Set<string>> {
  const named = new Set<string>();
  if (paths.length > 0 && after + 1 < below) await collectNamed(db, baseId, purgedTableId, new Set(paths), named, after + 1, below);
  return named;
}

/** Which of `paths` the whole log of the base names (a walk from start to end in one call). */
export async function filesNamedByLog(db: Executor, baseId: number, purgedTableId: string, paths: readonly string[]): Promise<Set<string>> {
  const scan = await continueLogScan(db, baseId, purgedTableId, await startLogScan(db, baseId, paths), async () => {});
  const named = new Set(scan.named);
  for (const path of await namedSince(db, baseId, purgedTableId, paths, scan.top)) named.add(path);
  return named;
}

/** Adds to `named` the `wanted` paths the base's operations with `from <= id < below` name, newest first, BATCH per statement. */
async function collectNamed(db: Executor, baseId: number, purgedTableId: string, wanted: Set<string>, named: Set<string>, from: number, below: number): Promise<void> {
  for (let beforeId = below; named.size < wanted.size; ) {
    const page = await db
      .selectFrom('operation_log')
      .select(['id', 'changes'])
      .where('base_id', '=', baseId)
      .where('id', '>=', from)
      .where('id', '<', beforeId)
      .where((eb) => eb.or([eb('changes', 'like', '%/asset/%'), eb('changes', 'like', 'z:%')]))
      .orderBy('id', 'desc')
      .limit(BATCH)
      .execute();
    for (const op of page) namedIn(op.changes, purgedTableId, wanted, named);
    if (page.length < BATCH) return;
    beforeId = Number(page[page.length - 1]!.id);
  }
}
