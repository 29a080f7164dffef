import type { Actor, BaseRef, RowsService } from '../rows/index.js';
import type { HostCall } from './script-sandbox.js';
import type { WriteMany } from './model.js';

/** What the `base` client of a script may read: the rows module's reads. */
export type RowReads = Pick<RowsService, 'get' | 'list'>;

/** Host calls one script run may make, and rows one `listRows` answers. */
export const CLIENT_LIMITS = { calls: 1000, listRows: 1000, cellsBytes: 64 * 1024 };

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function name(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 255) throw new Error(`${what} must be a non-empty text`);
  return value;
}

function cells(value: unknown): Obj {
  if (!isObject(value)) throw new Error('the row must be an object of column names and values');
  if (JSON.stringify(value).length > CLIENT_LIMITS.cellsBytes) throw new Error('the row is too large');
  return value;
}

/**
 * The `base` client of one script run: rows of this base by table name, read and written with the
 * rule creator's permission (writes go through the rows module as the rule's other row actions do,
 * so loop protection sees them as this rule's writes). Rows are keyed by column names.
 */
export function scriptClient(reads: RowReads, writeMany: WriteMany, base: BaseRef, actor: Actor, viewer: string | undefined): HostCall {
  let calls = 0;
  return async (method, args) => {
    if (++calls > CLIENT_LIMITS.calls) throw new Error(`a script may make at most ${CLIENT_LIMITS.calls} base calls`);
    const table = name(args[0], 'the table name');
    switch (method) {
      case 'getRow':
        return reads.get(base, name(args[1], 'the row id'), { table_name: table, convert_keys: true });
      case 'listRows': {
        const options = isObject(args[1]) ? args[1] : {};
        const limit = Math.min(Number.isInteger(options.limit) ? Number(options.limit) : 100, CLIENT_LIMITS.listRows);
        const start = Number.isInteger(options.start) ? Math.max(0, Number(options.start)) : 0;
        const view = typeof options.view === 'string' ? { view_name: options.view } : {};
        return reads.list(base, { table_name: table, start, limit: Math.max(1, limit), convert_keys: true, ...view }, { currentUser: viewer });
      }
      case 'updateRow': {
        const rowId = name(args[1], 'the row id');
        const row = cells(args[2]);
        await writeMany(base, actor, (w) => w.update({ table_name: table, updates: [{ row_id: rowId, row }] }));
        return { success: true };
      }
      case 'addRow': {
        const row = cells(args[1]);
        const result = (await writeMany(base, actor, (w) => w.append({ table_name: table, rows: [row] }))) as { row_ids?: Array<{ _id: string }> };
        return { _id: result.row_ids?.[0]?._id ?? null };
      }
      default:
        throw new Error(`base.${method} is not available`);
    }
  };
}
