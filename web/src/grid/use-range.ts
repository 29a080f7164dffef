import { useMemo, useRef, useState, type KeyboardEvent, type MouseEvent, type RefObject } from 'react';
import type { DataGridHandle } from 'react-data-grid';
import type { Row } from '../types';
import { bounds, cellAtTarget, extendedEnd, type CellPos, type CellRange } from './range';

const inField = (target: EventTarget) => (target as HTMLElement).closest('input, textarea, select, [contenteditable]') !== null;
const same = (a: CellPos, b: CellPos) => a.idx === b.idx && a.rowIdx === b.rowIdx;

/**
 * A block of selected cells on top of react-data-grid's single selected cell (the block's anchor):
 * Shift+arrows (Ctrl+Shift+arrows to the edge), Shift+click, or a mouse drag across cells extend it;
 * a plain move or click of the grid's cell, or Escape, ends it. `rows` are the grid's rows,
 * `columnCount` its table columns (the row-selection column, index 0, is never part of a block).
 */
export function useRangeSelection(grid: RefObject<DataGridHandle>, selected: RefObject<CellPos | null>, rows: readonly Row[], columnCount: number, selectable: (row: Row) => boolean) {
  const [range, setRange] = useState<CellRange | null>(null);
  const dragFrom = useRef<CellPos | null>(null);
  const swallowClick = useRef(false);

  const usable = (pos: CellPos | null): pos is CellPos => pos !== null && pos.idx >= 1 && pos.idx <= columnCount && rows[pos.rowIdx] !== undefined && selectable(rows[pos.rowIdx]!);

  /** Shift+arrows and Escape; true when the key was taken (the grid must not see it). */
  const onKeyDown = (e: KeyboardEvent): boolean => {
    if (inField(e.target) || !(e.target as HTMLElement).closest('.grid')) return false;
    if (e.key === 'Escape' && range) {
      setRange(null);
      return true;
    }
    if (!e.shiftKey || e.altKey) return false;
    const anchor = range?.anchor ?? selected.current;
    if (!usable(anchor)) return false;
    const end = extendedEnd(range?.end ?? anchor, e.key, e.ctrlKey || e.metaKey, columnCount, rows.length);
    if (!end) return false;
    setRange({ anchor, end });
    grid.current?.scrollToRow(end.rowIdx);
    grid.current?.scrollToColumn(end.idx);
    return true;
  };

  const onMouseDown = (e: MouseEvent) => {
    dragFrom.current = null;
    if (e.button !== 0 || inField(e.target)) return;
    const pos = cellAtTarget(e.target);
    if (!usable(pos)) return;
    const anchor = range?.anchor ?? selected.current;
    if (e.shiftKey && usable(anchor)) {
      setRange({ anchor, end: pos });
      // The grid would select the clicked cell (and end the block) on the click that follows.
      swallowClick.current = true;
      e.preventDefault();
      return;
    }
    dragFrom.current = pos;
  };

  const onMouseOver = (e: MouseEvent) => {
    const from = dragFrom.current;
    if (!from) return;
    if ((e.buttons & 1) === 0) {
      dragFrom.current = null;
      return;
    }
    const pos = cellAtTarget(e.target);
    if (!usable(pos) || (same(pos, from) && !range)) return;
    // The button went down on `from` but the click lands elsewhere: the grid has not selected it.
    if (!selected.current || !same(selected.current, from)) grid.current?.selectCell(from);
    setRange({ anchor: from, end: pos });
    window.getSelection()?.removeAllRanges();
  };

  const onClickCapture = (e: MouseEvent) => {
    if (!swallowClick.current) return;
    swallowClick.current = false;
    e.stopPropagation();
  };

  const rowClass = useMemo(() => {
    if (!range) return undefined;
    const b = bounds(range);
    const ids = new Set(rows.slice(b.top, b.bottom + 1).map((r) => r._id));
    return (row: Row) => (ids.has(row._id) ? 'in-range' : undefined);
  }, [range, rows]);

  return { range, clear: () => setRange(null), set: setRange, onKeyDown, onMouseDown, onMouseOver, onClickCapture, rowClass };
}
