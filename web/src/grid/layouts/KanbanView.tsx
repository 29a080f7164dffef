import { useState, type KeyboardEvent } from 'react';
import { t } from '../../i18n';
import type { Column, Row } from '../../types';
import { CardFields, rowTitle } from './card';

const DRAG_TYPE = 'application/x-basegate-row';

/**
 * Rows as cards in lanes, one lane per option of a single-select column (and one for no value).
 * A card moves to another lane by dragging it, or with the keyboard: focus it, ← / → (one write,
 * undoable like a cell edit). Read-only users see the lanes only.
 */
export function KanbanView({ rows, columns, stack, canEdit, onMove }: { rows: readonly Row[]; columns: readonly Column[]; stack: Column; canEdit: boolean; onMove: (row: Row, value: string | null) => void }) {
  const options = stack.data?.options ?? [];
  const lanes: Array<{ value: string | null; label: string; color?: string }> = [
    ...options.map((o) => ({ value: o.name, label: o.name, color: o.color })),
    { value: null, label: t('kanban.noValue') },
  ];
  const laneOf = (row: Row) => {
    const v = row[stack.name];
    return typeof v === 'string' && options.some((o) => o.name === v) ? v : null;
  };
  const [over, setOver] = useState<string | null | undefined>(undefined);
  const onCardKey = (e: KeyboardEvent, row: Row) => {
    if (!canEdit || (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) return;
    const at = lanes.findIndex((l) => l.value === laneOf(row));
    const to = lanes[at + (e.key === 'ArrowLeft' ? -1 : 1)];
    if (!to) return;
    e.preventDefault();
    onMove(row, to.value);
    // The card re-renders in its new lane: keep the focus on it.
    const id = row._id;
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-card="${CSS.escape(id)}"]`)?.focus());
  };
  return (
    <div className="kanban" role="region" aria-label={t('kanban.label', { column: stack.name })}>
      {lanes.map((lane) => {
        const cards = rows.filter((r) => laneOf(r) === lane.value);
        return (
          <section
            key={lane.label}
            className={`lane${over === lane.value ? ' drop-target' : ''}`}
            aria-label={t('kanban.lane', { lane: lane.label, count: cards.length })}
            onDragOver={(e) => {
              if (!canEdit || !e.dataTransfer.types.includes(DRAG_TYPE)) return;
              e.preventDefault();
              setOver(lane.value);
            }}
            onDragLeave={() => setOver(undefined)}
            onDrop={(e) => {
              setOver(undefined);
              const row = rows.find((r) => r._id === e.dataTransfer.getData(DRAG_TYPE));
              if (!row || laneOf(row) === lane.value) return;
              e.preventDefault();
              onMove(row, lane.value);
            }}
          >
            <h3>
              <span className="chip" style={{ background: lane.color ?? 'transparent', color: '#202428' }}>
                {lane.label}
              </span>{' '}
              <span className="muted small">{cards.length}</span>
            </h3>
            <ul className="cards">
              {cards.map((row) => (
                <li
                  key={row._id}
                  className="card"
                  data-card={row._id}
                  tabIndex={0}
                  draggable={canEdit}
                  aria-label={rowTitle(row, columns)}
                  aria-describedby={canEdit ? 'kanban-hint' : undefined}
                  onDragStart={(e) => {
                    e.dataTransfer.setData(DRAG_TYPE, row._id);
                    e.dataTransfer.effectAllowed = 'move';
                  }}
                  onKeyDown={(e) => onCardKey(e, row)}
                >
                  <strong>{rowTitle(row, columns)}</strong>
                  <CardFields row={row} columns={columns.filter((c) => c.key !== stack.key)} />
                </li>
              ))}
            </ul>
          </section>
        );
      })}
      {canEdit && (
        <p id="kanban-hint" className="muted small visually-hidden">
          {t('kanban.hint')}
        </p>
      )}
    </div>
  );
}
