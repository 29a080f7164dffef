import { useEffect, useRef, useState, type DragEvent } from 'react';
import type { Column as GridColumn, HeaderRendererProps } from 'react-data-grid';
import type { Column, Row, Table, View } from '../types';
import { gateway, type BaseAccess } from './base';
import { t } from '../i18n';

const DRAG_TYPE = 'application/x-basegate-column';

/**
 * Where a column dropped on `target` goes: `move_column` puts it after its target column, so a
 * column moved leftwards is put after the column before the target. `undefined`: no move.
 */
export function moveTarget(columns: readonly Column[], moving: string, target: string): string | undefined {
  const from = columns.findIndex((c) => c.name === moving);
  const to = columns.findIndex((c) => c.name === target);
  if (from <= 0 || to < 0 || from === to) return undefined;
  if (to > from) return columns[to]!.name;
  return columns[Math.max(to - 1, 0)]!.name;
}

/**
 * Headers that can be dragged onto another header to move their column in the view's order (the
 * first column stays first), as the Columns panel's "move left/right" buttons do.
 */
export function draggableHeaders(columns: GridColumn<Row>[], onMove: (column: string, target: string) => void): GridColumn<Row>[] {
  return columns.map((column, i) => ({
    ...column,
    headerRenderer: function DraggableHeader({ column: c }: HeaderRendererProps<Row>) {
      const [over, setOver] = useState(false);
      const accepts = (e: DragEvent) => e.dataTransfer.types.includes(DRAG_TYPE);
      return (
        <div
          className={`col-head${over ? ' drop-target' : ''}`}
          draggable={i > 0}
          title={i > 0 ? t('layout.dragHint') : undefined}
          onDragStart={(e) => {
            e.dataTransfer.setData(DRAG_TYPE, String(c.key));
            e.dataTransfer.effectAllowed = 'move';
          }}
          onDragOver={(e) => {
            if (!accepts(e)) return;
            e.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => {
            setOver(false);
            const moving = e.dataTransfer.getData(DRAG_TYPE);
            if (!moving || moving === c.key) return;
            e.preventDefault();
            onMove(moving, String(c.key));
          }}
        >
          {c.name}
        </div>
      );
    },
  }));
}

/**
 * The table's columns as the view shows them: in the view's order (the first column stays first;
 * columns the order does not name follow in the table's order) and with the view's widths.
 */
export function viewColumns(columns: readonly Column[], view: View | undefined): Column[] {
  const widths = view?.column_widths ?? {};
  const sized = columns.map((c) => (widths[c.key] ? { ...c, width: widths[c.key] } : c));
  const order = view?.column_order;
  if (!order || sized.length === 0) return sized;
  const [first, ...rest] = sized;
  const rank = new Map(order.map((key, i) => [key, i]));
  const named = rest.filter((c) => rank.has(c.key)).sort((a, b) => rank.get(a.key)! - rank.get(b.key)!);
  return [first!, ...named, ...rest.filter((c) => !rank.has(c.key))];
}

/** The view's column order (keys) after `moving` is put right after `after` (names). */
export function movedOrder(columns: readonly Column[], moving: string, after: string): string[] {
  const rest = columns.filter((c) => c.name !== moving);
  const at = rest.findIndex((c) => c.name === after);
  const moved = columns.find((c) => c.name === moving);
  if (!moved || at < 0) return columns.map((c) => c.key);
  return [...rest.slice(0, at + 1), moved, ...rest.slice(at + 1)].map((c) => c.key);
}

/**
 * Column widths as the user drags the grid's resize handles, saved in the view (`column_widths`,
 * so two views of a table can differ) once the drag has rested for half a second.
 */
export function useWidthSaver(access: BaseAccess, table: Table, view: View | undefined, run: (fn: () => Promise<unknown>) => unknown, reload: () => Promise<unknown>) {
  const pending = useRef(new Map<string, number>());
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  return (column: string, width: number) => {
    const key = table.columns.find((c) => c.name === column)?.key;
    if (!key || !view) return;
    pending.current.set(key, Math.max(20, Math.min(2000, Math.round(width))));
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const widths = { ...view.column_widths, ...Object.fromEntries(pending.current) };
      pending.current.clear();
      void run(async () => {
        await gateway(access, `views/${encodeURIComponent(view.name)}/?table_name=${encodeURIComponent(table.name)}`, { method: 'PUT', body: { column_widths: widths } });
        await reload();
      });
    }, 500);
  };
}
