import { useMemo, useState } from 'react';
import { t } from '../../i18n';
import type { Column, Row } from '../../types';
import { rowTitle } from './card';

const pad = (n: number) => String(n).padStart(2, '0');
/** The calendar day a date cell names (`YYYY-MM-DD`, as stored: never shifted by time zone). */
const dayOf = (value: unknown) => (typeof value === 'string' ? /^\d{4}-\d{2}-\d{2}/.exec(value)?.[0] : undefined);

/**
 * A month of rows placed on the day of a date column, weeks starting on Monday; previous / next /
 * this month. A row's title opens the expanded row.
 */
export function CalendarView({ rows, columns, dateColumn, onOpen }: { rows: readonly Row[]; columns: readonly Column[]; dateColumn: Column; onOpen: (row: Row) => void }) {
  const today = new Date();
  const [month, setMonth] = useState({ year: today.getFullYear(), month: today.getMonth() });
  const byDay = useMemo(() => {
    const map = new Map<string, Row[]>();
    for (const row of rows) {
      const day = dayOf(row[dateColumn.name]);
      if (!day) continue;
      const list = map.get(day);
      if (list) list.push(row);
      else map.set(day, [row]);
    }
    return map;
  }, [rows, dateColumn.name]);
  const first = new Date(Date.UTC(month.year, month.month, 1));
  const daysInMonth = new Date(Date.UTC(month.year, month.month + 1, 0)).getUTCDate();
  const lead = (first.getUTCDay() + 6) % 7;
  const cells: Array<number | null> = [...Array.from({ length: lead }, () => null), ...Array.from({ length: daysInMonth }, (_, i) => i + 1)];
  while (cells.length % 7 !== 0) cells.push(null);
  const weeks = Array.from({ length: cells.length / 7 }, (_, w) => cells.slice(w * 7, w * 7 + 7));
  const title = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(first);
  const weekdays = Array.from({ length: 7 }, (_, i) => new Intl.DateTimeFormat(undefined, { weekday: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(2024, 0, 1 + i))));
  const shift = (by: number) => setMonth(({ year, month: m }) => ({ year: year + Math.floor((m + by) / 12), month: (((m + by) % 12) + 12) % 12 }));
  return (
    <section className="calendar" aria-label={t('calendar.label', { column: dateColumn.name })}>
      <div className="inline">
        <button type="button" onClick={() => shift(-1)} aria-label={t('calendar.previous')}>
          ←
        </button>
        <h3 aria-live="polite">{title}</h3>
        <button type="button" onClick={() => shift(1)} aria-label={t('calendar.next')}>
          →
        </button>
        <button type="button" onClick={() => setMonth({ year: today.getFullYear(), month: today.getMonth() })}>
          {t('calendar.today')}
        </button>
      </div>
      <table className="month">
        <thead>
          <tr>
            {weekdays.map((d) => (
              <th key={d} scope="col">
                {d}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {weeks.map((week, w) => (
            <tr key={w}>
              {week.map((day, i) => {
                const key = day ? `${month.year}-${pad(month.month + 1)}-${pad(day)}` : '';
                const list = day ? byDay.get(key) ?? [] : [];
                return (
                  <td key={i} data-day={key || undefined}>
                    {day && <span className="day-number">{day}</span>}
                    {list.map((row) => (
                      <button key={row._id} type="button" className="event" onClick={() => onOpen(row)}>
                        {rowTitle(row, columns)}
                      </button>
                    ))}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
