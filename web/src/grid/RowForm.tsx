import { useEffect, useRef, useState, type ComponentType } from 'react';
import { createPortal } from 'react-dom';
import type { Column as GridColumn } from 'react-data-grid';
import { t } from '../i18n';
import type { Row } from '../types';

/** Editors that open their own dialog (a picker): in the form they open on "Edit". */
const PICKER_TYPES = new Set(['collaborator', 'link', 'multiple-select', 'file', 'image']);

/**
 * One row with every field of the table (hidden ones too), each with the grid's own editor for its
 * type (read-only fields and read-only users see the values). A field is saved when its editor
 * commits (Enter or leaving the field), through the same write (and undo) as a grid edit.
 */
export function RowForm({
  row,
  columns,
  types,
  onSave,
  onClose,
}: {
  row: Row;
  columns: readonly GridColumn<Row>[];
  /** The column type by key. */
  types: ReadonlyMap<string, string>;
  onSave: (before: Row, after: Row) => void;
  onClose: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [picking, setPicking] = useState<string | null>(null);
  // Where the focus was when the form opened (the "Expand row" button, a card), read before its
  // editors focus themselves as they mount: it goes back there once the form closes.
  const [opener] = useState(() => document.activeElement as HTMLElement | null);
  useEffect(() => {
    // The form starts at its first field.
    box.current?.querySelector<HTMLElement>('input, select, textarea, button')?.focus();
    return () => {
      if (opener?.isConnected) opener.focus();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const change = (next: Row, commit = true) => {
    if (commit && next !== row) onSave(row, next);
  };
  /** A picker closed (saved or not): the focus back on its field's "Edit" button. */
  const closePicker = (key: string) => {
    setPicking(null);
    requestAnimationFrame(() => box.current?.querySelector<HTMLElement>(`[data-edit="${CSS.escape(key)}"]`)?.focus());
  };
  const title = String(row[String(columns[0]?.key ?? '')] ?? '') || row._id;
  return createPortal(
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={box}
        className="dialog row-form"
        role="dialog"
        aria-modal="true"
        aria-label={t('rowForm.label', { row: title })}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && picking === null) onClose();
        }}
      >
        <h2>{title}</h2>
        <div className="fields">
          {columns.map((c) => {
            const Editor = c.editor as unknown as ComponentType<Record<string, unknown>> | undefined;
            const Formatter = c.formatter as unknown as ComponentType<Record<string, unknown>>;
            const picker = PICKER_TYPES.has(types.get(c.key) ?? '');
            const id = `field-${c.key}`;
            return (
              <div key={c.key} className="field" role="group" aria-labelledby={id}>
                <span id={id} className="field-name">
                  {c.name}
                </span>
                <div className="field-value">
                  {Editor && !picker ? (
                    <Editor row={row} column={c} rowIdx={0} onRowChange={change} onClose={() => undefined} />
                  ) : (
                    <Formatter row={row} column={c} rowIdx={0} isCellSelected={false} onRowChange={(r: Row) => change(r)} />
                  )}
                  {Editor && picker && (
                    <button type="button" data-edit={c.key} onClick={() => setPicking(c.key)} aria-label={t('rowForm.edit', { field: String(c.name) })}>
                      {t('rowForm.editShort')}
                    </button>
                  )}
                  {Editor && picker && picking === c.key && (
                    <Editor
                      row={row}
                      column={c}
                      rowIdx={0}
                      onRowChange={(next: Row, commit = false) => {
                        change(next, commit);
                        if (commit) closePicker(c.key);
                      }}
                      onClose={() => closePicker(c.key)}
                    />
                  )}
                </div>
              </div>
            );
          })}
        </div>
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('rowForm.close')}
          </button>
        </div>
      </div>
    </div>,
    document.body,
  );
}
