import type { Executor } from '../../db/index.js';
import { parseChanges } from './changes-codec.js';
import { collectAssetPaths } from './snapshot-files.js';

/** Operations read per step. */
const BATCH = 500;
/** The newest operations of a base the file check reads at most (see `filesNamedByLog`). */
export const LOG_FILE_SCAN_MAX = 100_000;

/**
 * Which of `paths` (`/asset/…` paths) values kept in the base's operation log may still name, where a
 * restore can put them back: the cells a deletion kept (the row trash, `restore-operations/`) and the
 * old values of changed cells. Rows of `purgedTableId` are left out (they cannot come back once their
 * table is purged), and so are rows purged from the trash. Walks the base's log newest first, only
 * operations whose text may name a file (or is compressed), and stops once every path is found.
 *
 * Bounded: it reads at most the newest `scanMax` operations of the base (one step down the (base, id)
 * index finds where to stop), however long the log. When the log goes further back, the paths not
 * found are answered as named too: a file an older operation may name is kept rather than the whole
 * log read (the next purge that names it, or the base's own purge, deletes it).
 */
export async function filesNamedByLog(db: Executor, baseId: number, purgedTableId: string, paths: readonly string[], scanMax = LOG_FILE_SCAN_MAX): Promise<Set<string>> {
  const wanted = new Set(paths);
  const named = new Set<string>();
  if (wanted.size === 0) return named;
  const floor = await db.selectFrom('operation_log').select('id').where('base_id', '=', baseId).orderBy('id', 'desc').offset(scanMax).limit(1).executeTakeFirst();
  for (let beforeId: number | undefined; ; ) {
    let query = db
      .selectFrom('operation_log')
      .select(['id', 'changes'])
      .where('base_id', '=', baseId)
      .where((eb) => eb.or([eb('changes', 'like', '%/asset/%'), eb('changes', 'like', 'z:%')]));
    if (floor !== undefined) query = query.where('id', '>', Number(floor.id));
    if (beforeId !== undefined) query = query.where('id', '<', beforeId);
    const page = await query.orderBy('id', 'desc').limit(BATCH).execute();
    for (const op of page) {
      for (const change of parseChanges(op.changes).rows) {
        if (change.x || change.t === purgedTableId || !change.b) continue;
        const found = new Set<string>();
        collectAssetPaths(JSON.stringify(change.b), found);
        for (const path of found) if (wanted.has(path)) named.add(path);
      }
      if (named.size === wanted.size) return named;
    }
    if (page.length < BATCH) break;
    beforeId = Number(page[page.length - 1]!.id);
  }
  // Older operations were not read: what they may name is kept.
  if (floor !== undefined) for (const path of wanted) named.add(path);
  return named;
}
