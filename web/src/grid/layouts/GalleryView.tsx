import { t } from '../../i18n';
import type { Column, Row } from '../../types';
import { CardFields, rowTitle } from './card';

/** Rows as cards in a grid: the title and the first fields with a value; a card opens the expanded row. */
export function GalleryView({ rows, columns, onOpen }: { rows: readonly Row[]; columns: readonly Column[]; onOpen: (row: Row) => void }) {
  return (
    <ul className="gallery" aria-label={t('gallery.label')}>
      {rows.map((row) => (
        <li key={row._id} className="card">
          <button type="button" className="card-title" onClick={() => onOpen(row)} aria-label={t('gallery.open', { row: rowTitle(row, columns) })}>
            {rowTitle(row, columns)}
          </button>
          <CardFields row={row} columns={columns} max={5} />
        </li>
      ))}
    </ul>
  );
}
