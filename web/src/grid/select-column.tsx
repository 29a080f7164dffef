import { useLayoutEffect, useRef, type MouseEvent } from 'react';
import { SELECT_COLUMN_KEY, useRowSelection, type Column, type FormatterProps, type HeaderRendererProps } from 'react-data-grid';
import type { Row } from '../types';
import { isGroupRow } from './group';
import { t } from '../i18n';

const stop = (e: MouseEvent) => e.stopPropagation();

/**
 * Focuses the checkbox when the grid selects its cell (keyboard use), as the grid's own column did: Space
 * then ticks it, and the arrow keys still move the selection.
 */
export function useFocusWhenSelected(isCellSelected: boolean) {
  const ref = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (isCellSelected) ref.current?.focus({ preventScroll: true });
  }, [isCellSelected]);
  return ref;
}

function SelectCell({ row, rowIdx, isCellSelected }: FormatterProps<Row>) {
  const [selected, onChange] = useRowSelection();
  const ref = useFocusWhenSelected(isCellSelected);
  // A group's header (grid/group.tsx) is not a row one can select.
  if (isGroupRow(row)) return null;
  return (
    <input
      ref={ref}
      type="checkbox"
      className="row-select"
      aria-label={t('select-column.select')}
      tabIndex={-1}
      checked={selected}
      onClick={stop}
      onChange={(e) => onChange({ rowIdx, checked: e.target.checked, isShiftClick: (e.nativeEvent as globalThis.MouseEvent).shiftKey })}
    />
  );
}

function SelectAll({ allRowsSelected, onAllRowsSelectionChange }: HeaderRendererProps<Row>) {
  return <input type="checkbox" className="row-select" aria-label={t('select-column.selectAll')} checked={allRowsSelected} onChange={(e) => onAllRowsSelectionChange(e.target.checked)} />;
}

/**
 * The row-selection column: one native checkbox per row. The grid's own SelectColumn draws each as
 * a label, a hidden input and a styled box (three elements, one with `all: unset`): fewer elements
 * to create and style when a row element is first made (docs/console.md, "Scrolling performance").
 */
export const SelectColumn: Column<Row> = {
  key: SELECT_COLUMN_KEY,
  name: '',
  width: 35,
  maxWidth: 35,
  resizable: false,
  sortable: false,
  frozen: true,
  cellClass: 'select-cell',
  headerCellClass: 'select-cell',
  headerRenderer: SelectAll,
  formatter: SelectCell,
};
