import type { Column, Row } from '../types';
import { copyText } from './clipboard';

/** A cell of the grid: `idx` among the grid's columns (0 is the row-selection column), `rowIdx` among its rows. */
export interface CellPos {
  idx: number;
  rowIdx: number;
}

/** A block of cells, from the anchor (where the selection started) to the cell it was extended to. */
export interface CellRange {
  anchor: CellPos;
  end: CellPos;
}

/** The block's bounds, inclusive. */
export function bounds({ anchor, end }: CellRange) {
  return {
    top: Math.min(anchor.rowIdx, end.rowIdx),
    bottom: Math.max(anchor.rowIdx, end.rowIdx),
    left: Math.min(anchor.idx, end.idx),
    right: Math.max(anchor.idx, end.idx),
  };
}

export const rangeSize = (range: CellRange) => {
  const b = bounds(range);
  return { rows: b.bottom - b.top + 1, columns: b.right - b.left + 1 };
};

const STEPS: Record<string, [number, number]> = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };

/**
 * Shift+arrow: the block's far end moves one cell (Ctrl/⌘ too: to the edge), kept inside the
 * table's cells (never onto the row-selection column). `undefined` for any other key.
 */
export function extendedEnd(end: CellPos, key: string, toEdge: boolean, columnCount: number, rowCount: number): CellPos | undefined {
  const step = STEPS[key];
  if (!step) return undefined;
  const [dx, dy] = step;
  const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));
  if (toEdge) return { idx: dx === 0 ? end.idx : dx < 0 ? 1 : columnCount, rowIdx: dy === 0 ? end.rowIdx : dy < 0 ? 0 : rowCount - 1 };
  return { idx: clamp(end.idx + dx, 1, columnCount), rowIdx: clamp(end.rowIdx + dy, 0, rowCount - 1) };
}

/** The block as tab-separated text, one row a line: what a spreadsheet pastes as the same block. */
export function rangeText(range: CellRange, rows: readonly Row[], columns: readonly Column[]): string {
  const b = bounds(range);
  const lines: string[] = [];
  for (let r = b.top; r <= b.bottom; r++) {
    const row = rows[r];
    if (!row) continue;
    const cells: string[] = [];
    // A tab or line break inside a value would split the cell: spreadsheets quote such cells.
    for (let c = b.left; c <= b.right; c++) cells.push(quoteCell(copyText(row[columns[c - 1]?.name ?? ''])));
    lines.push(cells.join('\t'));
  }
  return lines.join('\n');
}

function quoteCell(text: string): string {
  return /[\t\n"]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The cell under a mouse event's target in a react-data-grid, from its ARIA indexes (rows start at 2: the header is 1). */
export function cellAtTarget(target: EventTarget | null): CellPos | null {
  const cell = (target as HTMLElement | null)?.closest?.('[role=gridcell]');
  const row = cell?.closest('[role=row]');
  if (!cell || !row) return null;
  const idx = Number(cell.getAttribute('aria-colindex')) - 1;
  const rowIdx = Number(row.getAttribute('aria-rowindex')) - 2;
  return Number.isInteger(idx) && Number.isInteger(rowIdx) && rowIdx >= 0 ? { idx, rowIdx } : null;
}

/** CSS marking the block's cells: rows by class (`in-range`, from the grid's rowClass), columns by index. */
export function rangeStyle(range: CellRange): string {
  const b = bounds(range);
  const selectors: string[] = [];
  for (let c = b.left; c <= b.right; c++) selectors.push(`.grid .in-range > [aria-colindex="${c + 1}"]`);
  return `${selectors.join(',\n')} { background: var(--range-bg); box-shadow: inset 0 0 0 1px var(--range-border); }`;
}
