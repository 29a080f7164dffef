import { useState } from 'react';
import { createPortal } from 'react-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { EditorProps } from 'react-data-grid';
import { ErrorText, Loading, useAction } from '../ui';
import { gateway, q, type BaseAccess } from './base';
import type { Column, Row, Table } from '../types';
import { t } from '../i18n';

interface LinkCell {
  row_id: string;
  display_value?: string;
}

/**
 * Picks the linked rows of another table (its first 1,000 rows) in a dialog, then adds and removes
 * links with POST/DELETE …/links/. Rendered in a portal so the cell's size does not clip it.
 */
export function linkEditor(access: BaseAccess, table: Table, tables: Table[], column: Column) {
  const linkId = String(column.data?.link_id ?? '');
  const otherId = column.data?.table_id === table._id ? String(column.data?.other_table_id ?? '') : String(column.data?.table_id ?? '');
  const other = tables.find((t) => t._id === otherId);
  return function LinkEditor({ row, onClose }: EditorProps<Row>) {
    const client = useQueryClient();
    const current = Array.isArray(row[column.name]) ? (row[column.name] as LinkCell[]).map((c) => c.row_id) : [];
    const [chosen, setChosen] = useState<string[]>(current);
    const action = useAction();
    const candidates = useQuery(['link-candidates', access.dtable_uuid, otherId], () =>
      gateway<{ rows: Row[] }>(access, `rows/?${q({ table_id: otherId, limit: 1000, convert_keys: true })}`).then((r) => r.rows),
    );
    const label = (r: Row) => String(r[other?.columns[0]?.name ?? ''] ?? r._id);
    const save = () =>
      action.run(async () => {
        const added = chosen.filter((id) => !current.includes(id));
        const removed = current.filter((id) => !chosen.includes(id));
        const body = (ids: string[]) => ({ table_name: table.name, other_table_name: other?.name, link_id: linkId, other_rows_ids_map: { [row._id]: ids } });
        if (added.length > 0) await gateway(access, 'links/', { method: 'POST', body: body(added) });
        if (removed.length > 0) await gateway(access, 'links/', { method: 'DELETE', body: body(removed) });
        await client.invalidateQueries(['rows', access.dtable_uuid, table._id]);
        onClose(false);
      });
    return createPortal(
      <div className="dialog-backdrop" onKeyDown={(e) => { e.stopPropagation(); if (e.key === 'Escape') onClose(false); }}>
        <div className="dialog" role="dialog" aria-modal="true" aria-label={t('linkEditor.linkedRowsOfName', { name: column.name })}>
          <h3>{t('linkEditor.nameRowsOfValue', { name: column.name, value: other?.name ?? 'the other table' })}</h3>
          {candidates.isLoading ? (
            <Loading />
          ) : (
            <div className="choices">
              {(candidates.data ?? []).map((r) => (
                <label key={r._id} className="check">
                  <input type="checkbox" checked={chosen.includes(r._id)} onChange={(e) => setChosen(e.target.checked ? [...chosen, r._id] : chosen.filter((x) => x !== r._id))} />
                  {label(r)}
                </label>
              ))}
            </div>
          )}
          <ErrorText error={action.error ?? candidates.error} />
          <div className="inline">
            <button type="button" className="primary" onClick={() => void save()} disabled={action.busy}>
              {t('linkEditor.saveLinks')}
            </button>
            <button type="button" onClick={() => onClose(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      </div>,
      document.body,
    );
  };
}
