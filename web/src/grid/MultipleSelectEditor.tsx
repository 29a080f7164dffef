import type { EditorProps } from 'react-data-grid';
import type { Row, SelectOption } from '../types';
import { ChoicePicker } from './ChoicePicker';
import { t } from '../i18n';

/**
 * Picks a multiple select cell's options in the shared picker (ChoicePicker: typing filters, ↑/↓
 * move, Enter or Space toggle, Ctrl+Enter or "Done" saves, Escape cancels). The chosen options are
 * saved in the column's order.
 */
export function multipleSelectEditor(options: readonly SelectOption[]) {
  const choices = options.map((o) => ({
    id: o.name,
    text: o.name,
    content: (
      <span className="chip" style={{ background: o.color ?? '#eee', color: o.textColor ?? '#222' }}>
        {o.name}
      </span>
    ),
  }));
  const order = (names: string[]) => [...names].sort((a, b) => options.findIndex((o) => o.name === a) - options.findIndex((o) => o.name === b));
  return function MultipleSelectEditor({ row, column, onRowChange, onClose }: EditorProps<Row>) {
    const label = typeof column.name === 'string' ? column.name : column.key;
    const value = row[column.key];
    // Cells may hold option ids (API writes) as well as names: shown and kept as the option's name.
    const initial = Array.isArray(value) ? value.map((v) => options.find((o) => o.id === v)?.name ?? String(v)) : [];
    return (
      <ChoicePicker
        title={t('multiSelect.choose', { column: label })}
        findLabel={t('multiSelect.find', { column: label })}
        listLabel={t('multiSelect.options', { column: label })}
        none={t('multiSelect.none')}
        choices={choices}
        initial={initial}
        onSave={(chosen) => onRowChange({ ...row, [column.key]: order(chosen) }, true)}
        onCancel={() => onClose(false)}
      />
    );
  };
}
