import { CompiledQuery, PostgresAdapter } from 'kysely';
import type { Executor } from '../../db/index.js';

/*
 * On SQLite a single-row change is logged without its row-index entry (`operation_log_rows`): the
 * entry's key is a hash of a random row id, so writing it dirtied a cold page of the index on every
 * update, more than half of the log's cost (docs/history.md). The operation carries the key instead
 * (`operation_log.row_key`, no index) and the entries are written here in batches: by a scheduler
 * tick, and by every reader of the row index before it reads, so a reader always sees them all.
 * `operation_log_indexed.indexed_to` is the id up to which every operation has its entries.
 *
 * Correct because SQLite has one writer at a time and AUTOINCREMENT ids only grow: once the newest id
 * is read, every operation up to it is committed, and no later commit gets a smaller id. A step is
 * idempotent (INSERT OR IGNORE, the watermark only moves up), so an interrupted one, a restart or two
 * at once leave the index complete. PostgreSQL (concurrent writers, ids drawn before commit) writes
 * the entries in the write's statement and never comes here.
 */

/** Operations indexed per statement. */
const STEP = 5000;

const STATE = 'SELECT (SELECT indexed_to FROM operation_log_indexed WHERE id = 1) AS indexed_to, (SELECT MAX(id) FROM operation_log) AS newest';
// `row_count = 1` first: a many-row operation (its entries written with it) is skipped before its
// `changes`, which may run over several pages, are read for the last column.
const INDEX_RANGE =
  'INSERT OR IGNORE INTO operation_log_rows (base_id, row_key, op_id) SELECT base_id, row_key, id FROM operation_log WHERE id > ? AND id <= ? AND row_count = 1 AND row_key IS NOT NULL';
const ADVANCE = 'UPDATE operation_log_indexed SET indexed_to = ? WHERE id = 1 AND indexed_to < ?';

export function onPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Does this engine write single-row changes without their row-index entry? */
export function defersRowIndex(db: Executor): boolean {
  return !onPostgres(db);
}

/**
 * Writes the row-index entries of every operation logged without them (SQLite; nothing on
 * PostgreSQL). Returns how many operations it looked at (0: the index was complete).
 */
export async function indexPendingRows(db: Executor): Promise<number> {
  if (!defersRowIndex(db)) return 0;
  const state = (await db.executeQuery<{ indexed_to: number | null; newest: number | null }>(CompiledQuery.raw(STATE))).rows[0];
  const newest = Number(state?.newest ?? 0);
  let done = Number(state?.indexed_to ?? 0);
  if (newest <= done) return 0;
  const from = done;
  while (done < newest) {
    const to = Math.min(done + STEP, newest);
    const step = async (trx: Executor) => {
      await trx.executeQuery(CompiledQuery.raw(INDEX_RANGE, [done, to]));
      await trx.executeQuery(CompiledQuery.raw(ADVANCE, [to, to]));
    };
    // One commit per step when not already inside the caller's transaction (a restore's conflict check).
    if (db.isTransaction) await step(db);
    else await db.transaction().execute(step);
    done = to;
  }
  return newest - from;
}
