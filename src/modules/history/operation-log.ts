import { CompiledQuery, sql, type Transaction } from 'kysely';
import { RecordSet, WriteStatement, type Database, type DialectName } from '../../db/index.js';
import type { NewChangeEvent } from '../events/index.js';
import { FORMULA_REFRESH_ACTOR, isoMillis, type WriteRecord } from '../rows/index.js';
import type { Cells, LoggedChange } from './history.types.js';
import { storedChanges } from './changes-codec.js';
import { rowKey } from '../../shared/row-key.js';
import { filesOfChanges, recordFilesSqlite } from './file-refs.js';

const SQLITE_OPERATION_INSERT =
  'INSERT INTO operation_log (base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts, row_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const SQLITE_ROWS_INSERT = 'INSERT INTO operation_log_rows (base_id, row_key, op_id) SELECT ?, value, ? FROM json_each(?)';

type RowChange = Omit<LoggedChange, 'o' | 't'> & Partial<Pick<LoggedChange, 'o' | 't'>>;

/** A row's logged change; without its kind and table when the write stores those once (`withKind` false). */
function changeOf(e: NewChangeEvent, withKind: boolean): RowChange {
  const change: RowChange = withKind ? { o: e.opType, t: e.tableId, r: e.rowId, n: e.rowName } : { r: e.rowId, n: e.rowName };
  if (e.opType === 'insert_row') {
    const a: Cells = {};
    for (const item of e.rowData) a[item.column_key] = item.value;
    change.a = a;
  } else if (e.opType === 'delete_row') {
    const b: Cells = {};
    for (const item of e.rowData) b[item.column_key] = item.old_value;
    change.b = b;
    if (e.links) change.l = e.links;
    if (e.origin) change.c = [e.origin.creator, e.origin.ctime];
  } else {
    const a: Cells = {};
    const b: Cells = {};
    for (const item of e.rowData) {
      a[item.column_key] = item.value;
      b[item.column_key] = item.old_value;
    }
    change.a = a;
    change.b = b;
  }
  return change;
}

/**
 * Is the event's row new in this write (created now, so no operation before named it)? A row put back
 * by a restore keeps its creation time and is logged with its cells.
 */
function isNewRow(now: number): (e: NewChangeEvent) => boolean {
  const created = isoMillis(now);
  return (e) => e.opType === 'insert_row' && e.row?._ctime === created;
}

/** The operation's type as the original names it: one kind of change, one or several rows; else `batch`. */
export function operationType(rows: Array<Pick<LoggedChange, 'o'>>, structure: unknown[]): string {
  if (rows.length === 0) return structure.length === 1 ? String((structure[0] as { op_type: string }).op_type) : 'structure';
  if (structure.length > 0) return 'batch';
  const kinds = new Set(rows.map((c) => (c.o === 'add_link' || c.o === 'remove_link' ? 'update_links' : c.o)));
  if (kinds.size > 1) return 'batch';
  const [kind] = kinds;
  if (kind === 'update_links') return kind;
  return rows.length === 1 ? kind! : `${kind!}s`;
}

/**
 * The operations of the writes a statement carries (WriteStatement, PostgreSQL), in one part: their
 * ids drawn in order, the operations, and each one's row index entries.
 */
const LOGGED_WRITES = loggedWrites('logged_', false);

/**
 * The same for writes whose kept values name files (file-refs.ts): also each file's entry. A set of
 * its own (its own part names), so the many writes that name none carry no part for it.
 */
const LOGGED_WRITES_WITH_FILES = loggedWrites('logged_f', true);

/** The record set of logged writes, its parts named from `prefix`; `files`: records carry file entries too. */
function loggedWrites(prefix: string, files: boolean): RecordSet {
  const name = (part: string) => sql.raw(`${prefix}${part}`);
  const fileColumn = sql.raw(files ? ', files json' : '');
  const fileName = sql.raw(files ? ', files' : '');
  return new RecordSet(
    (gate, records) => sql`${name('writes')} AS (
      SELECT nextval('operation_log_id_seq') AS id, o.* FROM ${gate},
             ROWS FROM (json_to_recordset(${records}) AS (base_id bigint, write_id text, op_type text, table_id text, op_user text, op_app text,
               op_time bigint, row_count integer, changes json, reverts bigint, keys json${fileColumn}))
               WITH ORDINALITY AS o(base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts, keys${fileName}, n)
       ORDER BY o.n),
    ${name('operations')} AS (
      INSERT INTO operation_log (id, base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts)
      SELECT id, base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, CAST(changes AS text), reverts FROM ${name('writes')} ORDER BY id),
    ${name('rows')} AS (
      INSERT INTO operation_log_rows (base_id, row_key, op_id)
      SELECT w.base_id, CAST(k AS bigint), w.id FROM ${name('writes')} AS w, json_array_elements_text(w.keys) AS k)${
        files
          ? sql`,
    ${name('files')} AS (
      INSERT INTO operation_log_files (base_id, path, op_id)
      SELECT DISTINCT w.base_id, p, w.id FROM ${name('writes')} AS w, json_array_elements_text(w.files) AS p)`
          : sql``
      }`,
  );
}

/**
 * Appends one write to the operation log, inside the write's transaction (so the log is exactly the
 * committed writes; `statement`: the write's one statement on PostgreSQL, see BaseWriter). Formula refreshes of the scheduler are not a person's change and are left out.
 */
export async function recordWrite(trx: Transaction<Database>, dialect: DialectName, write: WriteRecord, statement?: WriteStatement): Promise<void> {
  if (write.actor.user === FORMULA_REFRESH_ACTOR.user && write.actor.app === FORMULA_REFRESH_ACTOR.app) return;
  const events = write.events;
  const first = events[0];
  // One kind on one table (nearly every write): stored once beside the rows (changes-codec.ts), and
  // the rows' changes built without them (no second copy of each to strip them from).
  const shared = first !== undefined && events.every((e) => e.opType === first.opType && e.tableId === first.tableId);
  // An append of new rows (and nothing else) keeps neither their cells nor row-index entries: the
  // rows hold both until they change, and later changes are logged (row-operations.ts, insert-cells.ts).
  // (Not a restore: the rows it puts back had operations before.)
  const fresh = shared && first.opType === 'insert_row' && write.structure.length === 0 && write.actor.reverts === undefined && events.every(isNewRow(write.now));
  const rows = fresh ? [] : events.map((e) => changeOf(e, !shared));
  const structure = write.structure.length > 0 ? { structure: write.structure } : {};
  const form = fresh
    ? { appended: { o: 'insert_row' as const, t: first.tableId, f: 1 as const, ids: events.map((e) => e.rowId), names: events.map((e) => e.rowName) } }
    : shared
      ? { shared: { o: first.opType, t: first.tableId, rows, ...structure } }
      : { plain: { rows: rows as LoggedChange[], ...structure } };
  const tables = new Set<string>([...events.map((e) => e.tableId), ...write.structure.map((s) => s.table_id)]);
  const rowIds = fresh ? events.map((e) => e.rowId) : [...new Set(events.map((e) => e.rowId))];
  // The row index keys rows by an integer (shared/row-key.ts): far cheaper entries than the text id.
  const rowKeys = fresh ? [] : [...new Set(rowIds.map(rowKey))];
  const op = {
    base_id: write.base.id,
    write_id: write.writeId,
    // (One kind: the first two rows tell it and whether it is one row or several.)
    op_type: operationType((shared ? events.slice(0, 2) : events).map((e) => ({ o: e.opType })), write.structure),
    table_id: tables.size === 1 ? [...tables][0]! : null,
    op_user: write.actor.user,
    op_app: write.actor.app,
    op_time: write.now,
    row_count: rowIds.length,
    changes: storedChanges(form, dialect !== 'postgres'),
    reverts: write.actor.reverts ?? null,
  };
  if (dialect === 'postgres') {
    // One round trip (or none of its own, as a part of the write's one statement): the operation and
    // its rows' index entries (the keys travel as one array). `changes` is JSON text: it goes into the
    // record as JSON, not as an escaped string, and is stored as written.
    const own = statement ?? new WriteStatement();
    const { changes, ...rest } = op;
    const files = filesOfChanges(rows, changes);
    if (files.length === 0) own.addRecord(LOGGED_WRITES, `${JSON.stringify({ ...rest, keys: rowKeys }).slice(0, -1)},"changes":${changes}}`);
    else own.addRecord(LOGGED_WRITES_WITH_FILES, `${JSON.stringify({ ...rest, keys: rowKeys, files }).slice(0, -1)},"changes":${changes}}`);
    if (!statement) await own.execute(trx);
  } else {
    // SQL text written once (SQLite reuses the prepared statement): building and compiling a Kysely
    // query per write cost more than the inserts themselves. The new id comes back without a read.
    // A single-row change carries its row's key and gets its row-index entry later, in a batch
    // (row-index.ts): that entry's random key cost more than the rest of the log together.
    const single = op.row_count === 1 && rowKeys.length === 1 ? rowKeys[0]! : null;
    const params = [op.base_id, op.write_id, op.op_type, op.table_id, op.op_user, op.op_app, op.op_time, op.row_count, op.changes, op.reverts, single];
    const opId = Number((await trx.executeQuery(CompiledQuery.raw(SQLITE_OPERATION_INSERT, params))).insertId);
    if (single === null && rowKeys.length > 0) await trx.executeQuery(CompiledQuery.raw(SQLITE_ROWS_INSERT, [op.base_id, opId, JSON.stringify(rowKeys)]));
    // The files its kept values name (nearly always none: one look at the stored text), for a table purge (file-refs.ts).
    await recordFilesSqlite(trx, op.base_id, opId, filesOfChanges(rows, op.changes));
  }
}
