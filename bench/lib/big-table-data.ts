import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { longStatement, longStatementTimeout, type Db, type DialectName } from '../../src/db/index.js';

/**
 * Bench data generator for big tables (issue 34): rows written straight into `base_rows` in the server's
 * storage shape (cells keyed by column key, as the rows module stores them), many at a time and in
 * large transactions, where the API (1,000 rows a call, each converted, evented and indexed for realtime)
 * would take hours. Measured on SQLite under a load of 30–40: 1,000,000 rows in 243–553 s. Only for benches: no change events, no history.
 *
 * `cells(n)` gives row n's cells by column key; rows get random 22-character ids and ids in order of n.
 */
export async function generateRows(
  db: Db,
  dialect: DialectName,
  target: { baseId: number; tableId: string; from: number; to: number },
  cells: (n: number) => Record<string, unknown>,
  progress?: (done: number) => void,
): Promise<void> {
  const CHUNK = dialect === 'sqlite' ? 2_000 : 5_000;
  const PER_TRANSACTION = 50_000;
  const now = Date.now();
  for (let start = target.from; start < target.to; start += PER_TRANSACTION) {
    const end = Math.min(target.to, start + PER_TRANSACTION);
    await db.transaction().execute(async (trx) => {
      for (let i = start; i < end; i += CHUNK) {
        const count = Math.min(CHUNK, end - i);
        if (dialect === 'postgres') {
          // One JSON parameter per chunk, unpacked by PostgreSQL (as rows.repository's insert does).
          const records = Array.from({ length: count }, (_, j) => ({ row_id: rowId(), data: cells(i + j) }));
          await sql`
            insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
            select ${target.baseId}::bigint, ${target.tableId}::text, r.row_id, r.data, ${now}::bigint, ${now}::bigint, 'bench', 'bench'
              from json_to_recordset(${JSON.stringify(records)}::json) as r(row_id text, data jsonb)`.execute(trx);
        } else {
          const values = Array.from({ length: count }, (_, j) => sql`(${target.baseId}, ${target.tableId}, ${rowId()}, ${JSON.stringify(cells(i + j))}, ${now}, ${now}, 'bench', 'bench')`);
          await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier) values ${sql.join(values)}`.execute(trx);
        }
      }
    });
    progress?.(end - target.from);
  }
  // Minutes at 10,000,000 rows: beyond the connections' 30-s statement timeout, so a long statement (db/long-statements.ts).
  if (dialect === 'postgres') {
    await db.connection().execute(async (conn) => {
      await longStatementTimeout().execute(conn);
      await longStatement('vacuum analyze base_rows').execute(conn);
      await sql`reset statement_timeout`.execute(conn);
    });
  }
}

function rowId(): string {
  return randomBytes(17).toString('base64url').slice(0, 22);
}

/** The big-table benches' options of the single select Kind. */
export const BIG_TABLE_KINDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

/** The big-table benches' columns: Title, Amount, Kind (a single select of `BIG_TABLE_KINDS`), Due. */
export const BIG_TABLE_COLUMNS = [
  { column_name: 'Title', column_type: 'text' },
  { column_name: 'Amount', column_type: 'number' },
  { column_name: 'Kind', column_type: 'single-select', column_data: { options: BIG_TABLE_KINDS.map((name, i) => ({ name, id: `k00${i}`, color: '#FFFFFF' })) } },
  { column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD' } },
];

const DAY = 86_400_000;

/** Row n of a big table of `rows` rows: Amount a permutation of 0…rows-1 (a range of width w holds w rows). */
export function bigTableRow(n: number, rows: number, title = `row ${n}`) {
  return {
    Title: title,
    Amount: (n * 7_919) % rows,
    Kind: BIG_TABLE_KINDS[n % BIG_TABLE_KINDS.length],
    Due: new Date(Date.UTC(2026, 0, 1) + ((n * 31) % 1000) * DAY).toISOString().slice(0, 10),
  };
}
