import { sql, type SqlBool } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import type { ChangeGroup } from './operations.js';

/** Archived rows are not in the whole-base read, so never an anchor (same test as the row listings). */
function notArchived(dialect: DialectName) {
  return dialect === 'postgres'
    ? sql<SqlBool>`(base_rows.data->>'_archived') is distinct from 'true'`
    : sql<SqlBool>`json_extract(base_rows.data, '$._archived') is not 1`;
}

/**
 * The row that the first still-existing row of an inserted group follows in the whole-base read (rows
 * in insertion order), '' when none does (the table's first rows, or the group is gone already: later
 * operations delete it). Our inserts append, so this is the table's last row before the write; a row
 * deleted since is deleted later in the stream too, and the row before it is just as right.
 */
export async function anchorOf(db: Executor, dialect: DialectName, group: ChangeGroup): Promise<string> {
  const first = group[0]!;
  // One round trip: the first row of the group still there, and the row before it.
  const above = await db
    .selectFrom('base_rows')
    .select('row_id')
    .where('base_id', '=', first.baseId)
    .where('table_id', '=', first.tableId)
    .where('id', '<', (eb) =>
      eb
        .selectFrom('base_rows')
        .select((inner) => inner.fn.min('id').as('id'))
        .where('base_id', '=', first.baseId)
        .where(
          'row_id',
          'in',
          group.map((event) => event.rowId),
        ),
    )
    .where(notArchived(dialect))
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return above?.row_id ?? '';
}
