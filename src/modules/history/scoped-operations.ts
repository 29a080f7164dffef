import { columnsBeyond, type BaseMetadata } from '../rows/index.js';
import type { Cells, LoggedChange, Operation } from './history.types.js';

/**
 * What a table-scoped token may read of the operation log: the operations of its tables (the listing's
 * `tableIds` filter), and in them nothing of what the rows hide from it — the columns beyond the scope
 * (links to tables outside it and what reads them, `columnsBeyond`, the one decision the rows, SQL and
 * the change feed follow) lose their cells, a link change or cell change on them alone is not listed,
 * and a structure entry naming one of them or a table outside the scope (a link column's creation, a
 * view filtering on it) is left out. An operation left with nothing is not listed.
 */
export interface OperationScope {
  /** Per table in the scope, the keys of its columns beyond it. */
  readonly hidden: ReadonlyMap<string, ReadonlySet<string>>;
  /** Texts a structure entry may not contain: hidden column keys, ids and names of the tables outside the scope. */
  readonly secrets: readonly string[];
}

/** The scope of `tableIds` (a table-scoped token's tables, as ids) over the base's current structure. */
export function operationScope(meta: BaseMetadata, tableIds: readonly string[]): OperationScope {
  const hidden = new Map<string, Set<string>>();
  const secrets: string[] = [];
  for (const table of meta.tables) {
    if (!tableIds.includes(table._id)) {
      secrets.push(table._id, JSON.stringify(table.name));
      continue;
    }
    const keys = new Set(columnsBeyond(tableIds, meta.tables, table).keys());
    hidden.set(table._id, keys);
    for (const key of keys) secrets.push(JSON.stringify(key));
  }
  return { hidden, secrets };
}

/** `op` as the scope lets it be read, or null when nothing of it is left. */
export function scopeOperation(op: Operation, scope: OperationScope): Operation | null {
  const rows = op.changes.rows.flatMap((c) => {
    const change = scopeChange(c, scope.hidden.get(c.t));
    return change ? [change] : [];
  });
  const structure = (op.changes.structure ?? []).filter((entry) => {
    const text = JSON.stringify(entry);
    return !scope.secrets.some((secret) => text.includes(secret));
  });
  if (rows.length === 0 && structure.length === 0) return null;
  return { ...op, changes: { ...op.changes, rows, ...(op.changes.structure ? { structure } : {}) } };
}

function scopeChange(c: LoggedChange, hidden: ReadonlySet<string> | undefined): LoggedChange | null {
  if (hidden === undefined) return null;
  if (hidden.size === 0) return c;
  const before = withoutKeys(c.b, hidden);
  const after = withoutKeys(c.a, hidden);
  if (c.o === 'add_link' || c.o === 'remove_link' || c.o === 'modify_row') {
    if (isEmpty(before) && isEmpty(after)) return null;
  }
  const { l: _links, ...rest } = c;
  const links = c.l === undefined ? undefined : Object.fromEntries(Object.entries(c.l).filter(([key]) => !hidden.has(key.replace(/^</, ''))));
  return { ...rest, ...(before ? { b: before } : {}), ...(after ? { a: after } : {}), ...(links ? { l: links } : {}) };
}

function withoutKeys(cells: Cells | undefined, hidden: ReadonlySet<string>): Cells | undefined {
  if (cells === undefined) return undefined;
  return Object.fromEntries(Object.entries(cells).filter(([key]) => !hidden.has(key)));
}

function isEmpty(cells: Cells | undefined): boolean {
  return cells === undefined || Object.keys(cells).length === 0;
}
