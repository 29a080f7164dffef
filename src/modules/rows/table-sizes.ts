import type { Db } from '../../db/index.js';

/** Whether a table has at least `rows` rows (reads at most that many entries of its (base, table) index, no row). */
export async function hasRows(db: Db, baseId: number, tableId: string, rows: number): Promise<boolean> {
  if (rows <= 0) return true;
  const row = await db.selectFrom('base_rows').select('id').where('base_id', '=', baseId).where('table_id', '=', tableId).orderBy('id').limit(1).offset(rows - 1).executeTakeFirst();
  return row !== undefined;
}

/** Tables whose last answer is kept (about 100 bytes each); the oldest answer goes first. */
const KEPT = 10_000;

/**
 * Whether a table has at least some number of rows, counted through its (base, table) index — at most
 * that many index entries, no row read — and the answer kept for `ttlMs`: a table that grew past the
 * mark is found so within that time.
 */
export class TableSizes {
  private readonly answers = new Map<string, { rows: number; big: boolean; at: number }>();

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly ttlMs = 60_000,
  ) {}

  async atLeast(baseId: number, tableId: string, rows: number): Promise<boolean> {
    const key = `${baseId}/${tableId}`;
    const kept = this.answers.get(key);
    if (kept && kept.rows === rows && this.now() - kept.at < this.ttlMs) return kept.big;
    const big = await hasRows(this.db, baseId, tableId, rows);
    this.answers.delete(key);
    this.answers.set(key, { rows, big, at: this.now() });
    if (this.answers.size > KEPT) this.answers.delete(this.answers.keys().next().value!);
    return big;
  }
}
