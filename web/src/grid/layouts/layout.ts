import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { gateway, q, type BaseAccess } from '../base';
import { useAction } from '../../ui';
import type { Column, Table, View } from '../../types';

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

/** The layout as the server's view stores it (`layout: {type, column_key}`, basegate's own field). */
export interface ServerLayout {
  type: string;
  column_key?: string;
}

const fromServer = (saved: ServerLayout | undefined): Layout | undefined =>
  saved && LAYOUTS.includes(saved.type as LayoutKind) ? { kind: saved.type as LayoutKind, column: saved.column_key } : undefined;

/**
 * How a view is shown: grid, kanban, gallery, calendar or form. Saved on the server's view
 * (`layout`) by whoever may change the view, so every browser opens the same layout; a read-only
 * user's choice stays in this browser (`localStorage`, per base, table and view), as does a choice
 * the server did not take.
 */
export function useLayout(access: BaseAccess, table: Table, view: View | undefined, canEdit: boolean) {
  const client = useQueryClient();
  const action = useAction();
  const storageKey = `basegate.layout.${access.dtable_uuid}.${table._id}.${view?.name ?? ''}`;
  const readLocal = (): Layout | undefined => {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey) ?? 'null') as Layout | null;
      return saved && LAYOUTS.includes(saved.kind) ? saved : undefined;
    } catch {
      return undefined;
    }
  };
  // This page's own choice, shown at once while the server stores it.
  const [chosen, setChosen] = useState<{ key: string; layout: Layout } | null>(null);
  const server = fromServer(view?.layout);
  const local = readLocal();
  const layout = (chosen?.key === storageKey ? chosen.layout : undefined) ?? (canEdit ? server ?? local : local ?? server) ?? { kind: 'grid' };
  const setLayout = (next: Layout) => {
    setChosen({ key: storageKey, layout: next });
    try {
      localStorage.setItem(storageKey, JSON.stringify(next));
    } catch {
      // Storage full or disabled: the choice lasts until the page is left.
    }
    if (!canEdit || !view) return;
    void action.run(async () => {
      const body = { table_name: table.name, layout: { type: next.kind, ...(next.column ? { column_key: next.column } : {}) } };
      await gateway(access, `views/${encodeURIComponent(view.name)}/?${q({ table_name: table.name })}`, { method: 'PUT', body });
      await client.invalidateQueries(['metadata', access.dtable_uuid]);
    });
  };
  return [layout, setLayout, action.error] as const;
}
