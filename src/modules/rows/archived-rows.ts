import { sql, type Expression, type SqlBool } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter } from './base-writer.js';
import { newRowId } from './ids.js';
import { findTable } from './metadata.js';
import type { StoredRow } from './present.js';
import { RowInput } from './row-input.js';
import * as repo from './rows.repository.js';

/**
 * Archived rows (`add-archived-rows/`, `insert-archived-rows/`): the original keeps them in its big-data
 * store. Here they are ordinary rows marked `_archived: true` in their stored data (column keys are
 * 4 letters/digits, so the name cannot clash with a cell): left out of row listings, views and the
 * whole-base read, found by SQL.
 */
export const ARCHIVE_LIMIT = 1000;

type Body = Record<string, unknown>;

export function isArchived(row: StoredRow): boolean {
  return row.data._archived === true;
}

/** WHERE term of row listings: only rows not archived. */
export function notArchived(dialect: DialectName): Expression<SqlBool> {
  return dialect === 'postgres'
    ? sql<SqlBool>`(base_rows.data->>'_archived') is distinct from 'true'`
    : // Most rows never had the key: a text search spares them the JSON parse (`"_archived"` unescaped
      // occurs in the text only as a key or a whole string value; json_extract then decides).
      sql<SqlBool>`(instr(base_rows.data, '"_archived"') = 0 or json_extract(base_rows.data, '$._archived') is not 1)`;
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function archiveInput(body: Body): Body[] {
  const rows = body.rows;
  if (!Array.isArray(rows) || !rows.every(isObject)) throw badRequest('rows invalid.');
  if (rows.length === 0) throw badRequest('rows invalid: the list is empty.');
  if (rows.length > ARCHIVE_LIMIT) throw badRequest(`Number of rows to append exceeds ${ARCHIVE_LIMIT}.`);
  return rows;
}

export class ArchivedRowsService {
  constructor(private readonly writer: BaseWriter) {}

  /**
   * Stores `rows` archived, validated as `POST rows/` validates them (all or none). No change events:
   * archived rows are outside every view, as in the original's big-data store.
   */
  async add(base: BaseRef, actor: Actor, body: Body): Promise<{ inserted_row_count: number }> {
    const rows = archiveInput(body);
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const input = new RowInput(table);
      let countersMoved = false;
      const stored = rows.map((values, index): StoredRow => {
        const data: Record<string, unknown> = {};
        input.apply(data, values, `Row ${index + 1}`);
        countersMoved = input.fillAutoNumbers(data, w.now) || countersMoved;
        data._archived = true;
        return { _id: newRowId(), _ctime: w.now, _mtime: w.now, _creator: actor.user, _last_modifier: actor.user, data };
      });
      if (countersMoved || input.optionsAdded()) w.metadataChanged('contents');
      await repo.insertRows(w.trx, base.id, table._id, stored);
      return { inserted_row_count: stored.length };
    });
  }
}
