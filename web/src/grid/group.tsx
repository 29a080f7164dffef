import type { Column as GridColumn, FormatterProps } from 'react-data-grid';
import type { Column, Row } from '../types';
import { cellText } from './search';
import { t } from '../i18n';

/** A group's header in the grid's rows: a pseudo-row the grid shows across every column. */
export interface GroupHeader extends Row {
  _group: { key: string; label: string; count: number; collapsed: boolean };
}

const GROUP_ID = '\u0000group:';
export const isGroupRow = (row: Row): row is GroupHeader => row._id.startsWith(GROUP_ID);

/**
 * The loaded rows grouped by one column's value (as text: option names, dates, numbers, names of
 * linked rows…): a header row per group, then its rows unless collapsed. Groups are ordered by their
 * value (`down`: reversed), empty values last; rows keep the view's order within a group.
 */
export function groupRows(rows: readonly Row[], column: Column, direction: 'up' | 'down', collapsed: ReadonlySet<string>): Row[] {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const key = cellText(row[column.name]);
    let list = groups.get(key);
    if (!list) groups.set(key, (list = []));
    list.push(row);
  }
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  const keys = [...groups.keys()].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : (direction === 'down' ? -1 : 1) * collator.compare(a, b)));
  const out: Row[] = [];
  for (const key of keys) {
    const list = groups.get(key)!;
    const header: GroupHeader = { _id: `${GROUP_ID}${key}`, _group: { key, label: key || t('group.empty'), count: list.length, collapsed: collapsed.has(key) } };
    out.push(header);
    if (!collapsed.has(key)) out.push(...list);
  }
  return out;
}

/**
 * The grid's columns while grouped: a group header spans every column from the first table column
 * (so nothing is frozen but the row-selection column: a frozen column cannot span unfrozen ones),
 * shows the value and the count, and collapses or expands its group (a button: keyboard too).
 */
export function groupedColumns(columns: GridColumn<Row>[], toggle: (key: string) => void): GridColumn<Row>[] {
  return columns.map((column, i) => {
    const Formatter = column.formatter;
    const editable = column.editable;
    const unfrozen: GridColumn<Row> = { ...column, frozen: false, editable: (row: Row) => !isGroupRow(row) && (typeof editable === 'function' ? editable(row) : editable !== false) };
    if (i > 0) return { ...unfrozen, formatter: (p: FormatterProps<Row>) => (isGroupRow(p.row) || !Formatter ? null : <Formatter {...p} />) };
    return {
      ...unfrozen,
      colSpan: (args) => (args.type === 'ROW' && isGroupRow(args.row) ? columns.length : undefined),
      formatter: function GroupOrCell(p: FormatterProps<Row>) {
        if (!isGroupRow(p.row)) return Formatter ? <Formatter {...p} /> : null;
        const g = p.row._group;
        return (
          <button type="button" className="group-head" aria-expanded={!g.collapsed} tabIndex={p.isCellSelected ? 0 : -1} onClick={() => toggle(g.key)}>
            <span aria-hidden="true">{g.collapsed ? '▸' : '▾'}</span> {g.label} <span className="muted">({g.count})</span>
          </button>
        );
      },
    };
  });
}
