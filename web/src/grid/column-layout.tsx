import { useEffect, useRef, useState, type DragEvent } from 'react';
import type { Column as GridColumn, HeaderRendererProps } from 'react-data-grid';
import type { Column, Row, Table } from '../types';
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
 * Headers that can be dragged onto another header to move their column (the table's column order,
 * as in SeaTable; the first column stays first). The Columns panel's "move left/right" buttons do
 * the same with the keyboard.
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
 * Column widths as the user drags the grid's resize handles, saved on the column (`resize_column`,
 * SeaTable keeps widths on the table's columns) once the drag has rested for half a second.
 */
export function useWidthSaver(access: BaseAccess, table: Table, run: (fn: () => Promise<unknown>) => unknown, reload: () => Promise<unknown>) {
  const pending = useRef(new Map<string, number>());
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  return (column: string, width: number) => {
    pending.current.set(column, Math.max(20, Math.min(2000, Math.round(width))));
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const widths = [...pending.current];
      pending.current.clear();
      void run(async () => {
        for (const [name, w] of widths)
          await gateway(access, 'columns/', { method: 'PUT', body: { table_name: table.name, op_type: 'resize_column', column: name, new_column_width: w } });
        await reload();
      });
    }, 500);
  };
}
