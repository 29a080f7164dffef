import { useState } from 'react';
import type { Column } from '../../types';

export type LayoutKind = 'grid' | 'kanban' | 'gallery' | 'calendar' | 'form';
export const LAYOUTS: LayoutKind[] = ['grid', 'kanban', 'gallery', 'calendar', 'form'];

export interface Layout {
  kind: LayoutKind;
  /** The kanban's single-select column or the calendar's date column (key). */
  column?: string;
}

/** The columns a layout can be built on: single selects for a kanban, dates for a calendar. */
export const layoutColumns = (kind: LayoutKind, columns: readonly Column[]) =>
  kind === 'kanban' ? columns.filter((c) => c.type === 'single-select') : kind === 'calendar' ? columns.filter((c) => c.type === 'date') : [];

/**
 * How a view is shown: grid, kanban, gallery, calendar or form. The server's views have no layout
 * (SeaTable keeps these as plugins), so the choice is this browser's, per base, table and view.
 */
export function useLayout(base: string, table: string, view: string | undefined) {
  const storageKey = `basegate.layout.${base}.${table}.${view ?? ''}`;
  const read = (): Layout => {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) ?? 'null') as Layout | null;
      return saved && LAYOUTS.includes(saved.kind) ? saved : { kind: 'grid' };
    } catch {
      return { kind: 'grid' };
    }
  };
  const [state, setState] = useState<{ key: string; layout: Layout }>(() => ({ key: storageKey, layout: read() }));
  const layout = state.key === storageKey ? state.layout : read();
  const setLayout = (next: Layout) => {
    setState({ key: storageKey, layout: next });
    try {
      localStorage.setItem(storageKey, JSON.stringify(next));
    } catch {
      // Storage full or disabled: the choice lasts until the page is left.
    }
  };
  return [layout, setLayout] as const;
}
