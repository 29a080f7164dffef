import type { Executor } from '../../db/index.js';
import { parseChanges } from './changes-codec.js';
import { collectAssetPaths } from './snapshot-files.js';

/** Operations read per step. */
const BATCH = 500;

/**
 * Which of `paths` (`/asset/…` paths) values kept in the base's operation log still name, where a
 * restore can put them back: the cells a deletion kept (the row trash, `restore-operations/`) and the
 * old values of changed cells. Rows of `purgedTableId` are left out (they cannot come back once their
 * table is purged), and so are rows purged from the trash. Walks the base's log newest first, only
 * operations whose text may name a file (or is compressed), and stops once every path is found.
 */
export async function filesNamedByLog(db: Executor, baseId: number, purgedTableId: string, paths: readonly string[]): Promise<Set<string>> {
  const wanted = new Set(paths);
  const named = new Set<string>();
  if (wanted.size === 0) return named;
  for (let beforeId: number | undefined; ; ) {
    let query = db
      .selectFrom('operation_log')
      .select(['id', 'changes'])
      .where('base_id', '=', baseId)
      .where((eb) => eb.or([eb('changes', 'like', '%/asset/%'), eb('changes', 'like', 'z:%')]));
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
    if (page.length < BATCH) return named;
    beforeId = Number(page[page.length - 1]!.id);
  }
}
