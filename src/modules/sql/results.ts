/** Query rows → the response's `results`. */
import { fieldOfColumn } from './schema.js';
import { readField, type StoredRow } from './output.js';
import type { GroupedPlan, RowsPlan } from './select.js';

/** Link cells keyed `<column key>:<row id>` (loaded by the caller: links are not part of `data`). */
export type LinkCells = Map<string, unknown>;

/** `raw[i]` is the query's row behind `rows[i]` (computed select items are read from it). */
export function shapeRows(plan: RowsPlan, rows: StoredRow[], convertKeys: boolean, links?: LinkCells, raw: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (plan.outputs === null) {
    const fields = plan.table.columns.map((c) => ({ key: convertKeys ? c.name : c.key, field: fieldOfColumn(c) }));
    return rows.map((row) => {
      const out: Record<string, unknown> = {
        _id: row._id,
        _ctime: readField({ kind: 'row', field: 'ctime', valueType: 'time', label: '_ctime' }, row, convertKeys),
        _mtime: readField({ kind: 'row', field: 'mtime', valueType: 'time', label: '_mtime' }, row, convertKeys),
        _creator: row._creator,
        _last_modifier: row._last_modifier,
        _archived: false,
        _locked: null,
        _locked_by: null,
      };
      for (const f of fields) out[f.key] = readField(f.field, row, convertKeys, links);
      return out;
    });
  }
  const outputs = plan.outputs;
  return rows.map((row, i) => {
    // The original always answers the row id; the official clients read it.
    const out: Record<string, unknown> = { _id: row._id };
    for (const o of outputs) {
      if ('field' in o) out[o.key] = readField(o.field, row, convertKeys, links);
      else if ('formula' in o) out[o.key] = o.formula.evaluate(row);
      else out[o.key] = o.decode(raw[i]?.[o.column]);
    }
    return out;
  });
}

export function shapeGrouped(plan: GroupedPlan, rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const o of plan.outputs) out[o.key] = o.decode(row[o.column]);
    return out;
  });
}

