import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ConfirmButton, ErrorText, clearIfSent, useAction } from '../ui';
import { gateway, type BaseAccess } from './base';
import { ADDABLE_TYPES, OPTION_COLORS } from './column-types';
import { FormulaBuilder } from './FormulaBuilder';
import type { Column, Table } from '../types';
import { t } from '../i18n';

/**
 * Add, rename, reorder and delete the columns of a table. The columns are listed in the current view's
 * order (`columns`), and the move buttons move a column in that order (`onMove`, as dragging a header
 * does: saved in the view's `column_order`, other views keep theirs); the first column stays first.
 */
export function ColumnsPanel({ access, table, columns = table.columns, onMove }: { access: BaseAccess; table: Table; columns?: readonly Column[]; onMove?: (name: string, by: -1 | 1) => void }) {
  const client = useQueryClient();
  const action = useAction();
  const refresh = () => Promise.all([client.invalidateQueries(['metadata', access.dtable_uuid]), client.invalidateQueries(['rows', access.dtable_uuid, table._id])]);
  const put = (body: Record<string, unknown>) =>
    action.run(async () => {
      await gateway(access, 'columns/', { method: 'PUT', body: { table_name: table.name, ...body } });
      await refresh();
    });
  return (
    <div className="panel" aria-label={t('toolbar.columns')}>
      <NewColumn access={access} table={table} onAdded={refresh} />
      <ErrorText error={action.error} />
      <table className="list">
        <tbody>
          {columns.map((c, i) => (
            <tr key={c.key}>
              <td>{c.name}</td>
              <td className="muted">{c.type}</td>
              <td>
                <button type="button" aria-label={t('columnsPanel.moveNameLeft', { name: c.name })} disabled={i <= 1 || !onMove} onClick={() => onMove?.(c.name, -1)}>
                  ←
                </button>
                <button type="button" aria-label={t('columnsPanel.moveNameRight', { name: c.name })} disabled={i === 0 || i === columns.length - 1 || !onMove} onClick={() => onMove?.(c.name, 1)}>
                  →
                </button>
                <button
                  type="button"
                  onClick={() => {
                    const name = window.prompt(t('columnsPanel.renameColumnNameTo', { name: c.name }), c.name);
                    if (name && name !== c.name) void put({ op_type: 'rename_column', column: c.key, new_column_name: name });
                  }}
                >
                  {t('common.rename')}
                </button>
                <ConfirmButton
                  label={t('common.delete')}
                  question={t('columnsPanel.deleteTheColumnName', { name: c.name })}
                  disabled={i === 0}
                  onConfirm={() =>
                    void action.run(async () => {
                      await gateway(access, 'columns/', { method: 'DELETE', body: { table_name: table.name, column: c.key } });
                      await refresh();
                    })
                  }
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewColumn({ access, table, onAdded }: { access: BaseAccess; table: Table; onAdded: () => Promise<unknown> }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('text');
  const [extra, setExtra] = useState('');
  const action = useAction();
  const columnData = (): Record<string, unknown> | undefined => {
    switch (type) {
      case 'single-select':
      case 'multiple-select':
        return {
          options: extra
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .map((n, i) => ({ name: n, color: OPTION_COLORS[i % OPTION_COLORS.length], textColor: '#202428' })),
        };
      case 'rate':
        return { rate_max_number: Number(extra) || 5 };
      case 'link':
        return { table: table.name, other_table: extra };
      case 'duration':
        return { format: 'duration', duration_format: 'h:mm' };
      case 'date':
        return { format: 'YYYY-MM-DD' };
      case 'formula':
        return { formula: extra };
      default:
        return undefined;
    }
  };
  const extraLabel: Record<string, string> = {
    'single-select': 'Options, comma-separated',
    'multiple-select': 'Options, comma-separated',
    rate: 'Maximum rating',
    link: 'Other table name',
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const [sentName, sentExtra] = [name, extra];
    void action.run(async () => {
      const data = columnData();
      await gateway(access, 'columns/', { method: 'POST', body: { table_name: table.name, column_name: sentName, column_type: type, ...(data ? { column_data: data } : {}) } });
      clearIfSent(setName, sentName, '');
      clearIfSent(setExtra, sentExtra, '');
      await onAdded();
    });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label={t('columnsPanel.addColumn')}>
      <input aria-label={t('columnsPanel.columnName')} placeholder={t('columnsPanel.columnName')} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
      <select
        aria-label={t('columnsPanel.columnType')}
        value={type}
        onChange={(e) => {
          setType(e.target.value);
          setExtra('');
        }}
      >
        {ADDABLE_TYPES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      {type === 'formula' && <FormulaBuilder access={access} table={table} formula={extra} onChange={setExtra} />}
      {extraLabel[type] && <input aria-label={extraLabel[type]} placeholder={extraLabel[type]} value={extra} onChange={(e) => setExtra(e.target.value)} required={type !== 'rate'} />}
      <button type="submit" disabled={action.busy}>
        {t('columnsPanel.addColumn')}
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
