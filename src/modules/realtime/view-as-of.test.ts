import { describe, expect, it } from 'vitest';
import type { StructureEvent } from '../events/index.js';
import type { ColumnMeta, TableMeta, ViewMeta } from '../rows/index.js';
import { structureOps } from '../rows/structure-ops.js';
import { viewAsOf } from './view-as-of.js';

const column = (key: string, type = 'text', data: ColumnMeta['data'] = null): ColumnMeta => ({ key, name: key, type, width: 200, editable: true, resizable: true, draggable: true, data });
const view = (over: Partial<ViewMeta> = {}): ViewMeta =>
  ({ _id: 'V1', name: 'V', type: 'table', is_locked: false, filter_conjunction: 'And', filters: [], sorts: [], groupbys: [], hidden_columns: [], ...over }) as ViewMeta;
const table = (columns: ColumnMeta[], views: ViewMeta[]): TableMeta => ({ _id: 'T1', name: 'People', is_header_locked: false, header_settings: {}, summary_configs: {}, columns, views });
const base = (tables: TableMeta[]) => ({ version: 1, format_version: 1, settings: {}, tables }) as never;

/** The structure events that turn `from` into `to` (as the writer appends them), placed after row event 10. */
function changes(from: TableMeta[], to: TableMeta[]): StructureEvent[] {
  return structureOps(base(from), base(to)).map((op, i) => ({ id: i + 1, baseId: 1, baseUuid: 'b', afterEventId: 10, op, opUser: 'u', opApp: null, opTime: 0 }));
}

describe('a view as it was before later structure changes', () => {
  const red = view({ filters: [{ column_key: 'team', filter_predicate: 'is', filter_term: 'red' }], hidden_columns: ['pay'] });
  const then = table([column('name'), column('team'), column('pay', 'number')], [red]);

  it('sets back filters, their conjunction and hidden columns', () => {
    const blue = view({ filters: [{ column_key: 'team', filter_predicate: 'is', filter_term: 'blue' }], filter_conjunction: 'Or', hidden_columns: [] });
    const now = table(then.columns, [blue]);
    const back = viewAsOf(now, 'T1', 'V1', changes([then], [now]));
    expect(back?.view).toMatchObject({ filters: red.filters, filter_conjunction: 'And', hidden_columns: ['pay'] });
    expect(back?.table.views[0]).toBe(back?.view);
    // Nothing later: the view as it is.
    expect(viewAsOf(now, 'T1', 'V1', [])?.view).toEqual(blue);
  });

  it('sets back columns: a deleted one returns in its place, an added one goes, a changed type or data returns', () => {
    const now = table([column('name', 'number'), column('pay', 'number', { precision: 2 }), column('extra')], [red]);
    const before = table([column('name'), column('team'), column('pay', 'number', { precision: 0 })], [red]);
    const back = viewAsOf(now, 'T1', 'V1', changes([before], [now]));
    expect(back?.table.columns).toEqual(before.columns);
  });

  it('gives a view deleted since, and nothing for one added since or of a table added since', () => {
    const gone = table(then.columns, []);
    expect(viewAsOf(gone, 'T1', 'V1', changes([then], [gone]))?.view).toEqual(red);
    expect(viewAsOf(then, 'T1', 'V1', changes([gone], [then]))).toBeNull();
    expect(viewAsOf(then, 'T1', 'V1', changes([], [then]))).toBeNull();
    expect(viewAsOf(null, 'T1', 'V1', changes([then], []))).toMatchObject({ view: red, table: { columns: then.columns } });
  });

  it("leaves other tables' and views' changes, and undoing a change the view no longer shows changes nothing", () => {
    const other = { ...then, _id: 'T2', views: [view({ _id: 'V2' })] };
    const otherNow = { ...other, views: [view({ _id: 'V2', hidden_columns: ['name'] })] };
    expect(viewAsOf(then, 'T1', 'V1', changes([then, other], [then, otherNow]))?.view).toEqual(red);
    const now = table(then.columns, [view({ filters: [] })]);
    const later = changes([then], [now]);
    // Read before its metadata: the change is undone on a view that has not got it yet — the same view.
    expect(viewAsOf(then, 'T1', 'V1', later)?.view).toEqual(red);
  });
});
