import { existsSync, renameSync, rmSync } from 'node:fs';
import SQLite from 'better-sqlite3';

/**
 * An online copy of a SQLite database into `target` (`VACUUM INTO`): one consistent snapshot of
 * every committed write, taken in a read transaction, so the server keeps reading and writing
 * meanwhile (WAL). Written beside the target and renamed into place once complete and checked, so
 * a target that exists is always a whole backup. Refuses to overwrite an existing file.
 */
export function backupSqlite(source: string, target: string): { bytes: number } {
  if (source === ':memory:') throw new Error('An in-memory database cannot be backed up.');
  if (!existsSync(source)) throw new Error(`No database at ${source}.`);
  if (existsSync(target)) throw new Error(`${target} exists; name a new file.`);
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const db = new SQLite(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000'); // (a command-line tool: waiting synchronously blocks nobody)
    db.prepare('VACUUM INTO ?').run(partial);
  } finally {
    db.close();
  }
  const copy = new SQLite(partial, { readonly: true });
  let bytes: number;
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`The copy failed its check: ${String(check)}`);
    bytes = (copy.pragma('page_count', { simple: true }) as number) * (copy.pragma('page_size', { simple: true }) as number);
  } catch (error) {
    copy.close();
    rmSync(partial, { force: true });
    throw error;
  }
  copy.close();
  renameSync(partial, target);
  return { bytes };
}
