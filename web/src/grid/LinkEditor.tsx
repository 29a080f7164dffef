import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { EditorProps } from 'react-data-grid';
import { ErrorText, Loading, useAction } from '../ui';
import { gateway, q, type BaseAccess } from './base';
import { ChoicePicker } from './ChoicePicker';
import type { Column, Row, Table } from '../types';
import { t } from '../i18n';

interface LinkCell {
  row_id: string;
  display_value?: string;
}

/**
 * Picks the linked rows of another table (its first 1,000 rows) in the shared picker (ChoicePicker:
 * typing filters, arrows move, Enter/Space toggle, Ctrl+Enter saves, Escape cancels), then adds and
 * removes links with POST/DELETE …/links/.
 */
export function linkEditor(access: BaseAccess, table: Table, tables: Table[], column: Column) {
  const linkId = String(column.data?.link_id ?? '');
  const otherId = column.data?.table_id === table._id ? String(column.data?.other_table_id ?? '') : String(column.data?.table_id ?? '');
  const other = tables.find((t) => t._id === otherId);
  return function LinkEditor({ row, onClose }: EditorProps<Row>) {
    const client = useQueryClient();
    const current = Array.isArray(row[column.name]) ? (row[column.name] as LinkCell[]).map((c) => c.row_id) : [];
    const action = useAction();
    const candidates = useQuery(['link-candidates', access.dtable_uuid, otherId], () =>
      gateway<{ rows: Row[] }>(access, `rows/?${q({ table_id: otherId, limit: 1000, convert_keys: true })}`).then((r) => r.rows),
    );
    const label = (r: Row) => String(r[other?.columns[0]?.name ?? ''] ?? r._id);
    const save = (chosen: string[]) =>
      action.run(async () => {
        const added = chosen.filter((id) => !current.includes(id));
        const removed = current.filter((id) => !chosen.includes(id));
        const body = (ids: string[]) => ({ table_name: table.name, other_table_name: other?.name, link_id: linkId, other_rows_ids_map: { [row._id]: ids } });
        if (added.length > 0) await gateway(access, 'links/', { method: 'POST', body: body(added) });
        if (removed.length > 0) await gateway(access, 'links/', { method: 'DELETE', body: body(removed) });
        await client.invalidateQueries(['rows', access.dtable_uuid, table._id]);
        onClose(false);
      });
    const otherName = other?.name ?? t('linkEditor.otherTable');
    return (
      <ChoicePicker
        title={t('linkEditor.linkedRowsOfName', { name: column.name })}
        heading={t('linkEditor.nameRowsOfValue', { name: column.name, value: otherName })}
        findLabel={t('linkEditor.find', { name: otherName })}
        listLabel={t('linkEditor.rowsOf', { name: otherName })}
        none={t('linkEditor.none')}
        saveText={t('linkEditor.saveLinks')}
        choices={(candidates.data ?? []).map((r) => ({ id: r._id, text: label(r) }))}
        initial={current}
        busy={action.busy || candidates.isLoading}
        status={candidates.isLoading ? <Loading /> : (action.error ?? candidates.error) ? <ErrorText error={action.error ?? candidates.error} /> : undefined}
        onSave={(chosen) => void save(chosen)}
        onCancel={() => onClose(false)}
      />
    );
  };
}
