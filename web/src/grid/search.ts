import { useMemo } from 'react';
import type { Column, Row } from '../types';

export interface Match {
  rowIdx: number;
  /** Index among the shown columns (the grid's column index less the selection column). */
  columnIdx: number;
}

/** The text a search sees in a cell: strings, numbers, option names, linked rows' display values. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cellText).join(' ');
  if (typeof value === 'object') return String((value as Record<string, unknown>).display_value ?? '');
  return String(value);
}

/** No search: one constant, so the grid's columns (which depend on it) stay the same objects. */
const NO_ROWS: readonly Row[] = [];
const NO_SEARCH = { matches: [] as Match[], isMatch: (_row: Row, _column: string) => false };

/** Every cell of the loaded rows whose text contains the term (case-insensitive), in reading order. */
export function useSearch(rows: readonly Row[], columns: readonly Column[], term: string) {
  const needle = term.trim().toLowerCase();
  // Without a term the loaded rows are not looked at, so new pages change nothing here.
  const searched = needle ? rows : NO_ROWS;
  return useMemo(() => {
    if (!needle) return NO_SEARCH;
    const matches: Match[] = [];
    const cells = new Set<string>();
    searched.forEach((row, rowIdx) =>
      columns.forEach((column, columnIdx) => {
        if (cellText(row[column.name]).toLowerCase().includes(needle)) {
          matches.push({ rowIdx, columnIdx });
          cells.add(`${row._id}\u0000${column.name}`);
        }
      }),
    );
    return { matches, isMatch: (row: Row, columnName: string) => cells.has(`${row._id}\u0000${columnName}`) };
  }, [searched, columns, needle]);
}
