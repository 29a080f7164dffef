import type { Column, Row } from '../../types';
import { formatDate } from '../format';
import { cellText } from '../search';

/** A row's title: its first column's text (the row id when empty). */
export function rowTitle(row: Row, columns: readonly Column[]): string {
  const first = columns[0];
  return (first ? cellText(row[first.name]) : '') || row._id;
}

/** A field's text on a card: dates in the column's format, the rest as the search sees it. */
export function fieldText(row: Row, column: Column): string {
  const value = row[column.name];
  return column.type === 'date' ? formatDate(value, column.data?.format) : cellText(value);
}

/** The fields a card shows under its title: the next few shown columns that have a value. */
export function CardFields({ row, columns, max = 3 }: { row: Row; columns: readonly Column[]; max?: number }) {
  const fields = columns
    .slice(1)
    .map((c) => [c, fieldText(row, c)] as const)
    .filter(([, text]) => text !== '')
    .slice(0, max);
  if (fields.length === 0) return null;
  return (
    <dl className="card-fields">
      {fields.map(([c, text]) => (
        <div key={c.key}>
          <dt>{c.name}</dt>
          <dd>{text}</dd>
        </div>
      ))}
    </dl>
  );
}
