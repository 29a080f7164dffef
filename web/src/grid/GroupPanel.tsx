import { useQueryClient } from '@tanstack/react-query';
import { ErrorText, useAction } from '../ui';
import { t } from '../i18n';
import { gateway, q, type BaseAccess } from './base';
import type { Table, View } from '../types';

/** The column the view groups its rows by, saved on the view (`groupbys`) at each change. */
export function GroupPanel({ access, table, view }: { access: BaseAccess; table: Table; view: View }) {
  const client = useQueryClient();
  const action = useAction();
  const current = view.groupbys?.[0];
  const save = (groupbys: Array<{ column_key: string; sort_type: 'up' | 'down' }>) =>
    action.run(async () => {
      await gateway(access, `views/${encodeURIComponent(view.name)}/?${q({ table_name: table.name })}`, {
        method: 'PUT',
        body: { table_name: table.name, groupbys },
      });
      await client.invalidateQueries(['metadata', access.dtable_uuid]);
    });
  return (
    <fieldset className="panel" aria-label={t('group.label')}>
      <legend>{t('group.legend', { view: view.name })}</legend>
      <label>
        {t('group.column')}{' '}
        <select
          aria-label={t('group.column')}
          value={current?.column_key ?? ''}
          disabled={action.busy}
          onChange={(e) => void save(e.target.value ? [{ column_key: e.target.value, sort_type: current?.sort_type ?? 'up' }] : [])}
        >
          <option value="">{t('group.none')}</option>
          {table.columns.map((c) => (
            <option key={c.key} value={c.key}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      {current && (
        <label>
          {t('group.order')}{' '}
          <select aria-label={t('group.order')} value={current.sort_type ?? 'up'} disabled={action.busy} onChange={(e) => void save([{ column_key: current.column_key, sort_type: e.target.value as 'up' | 'down' }])}>
            <option value="up">{t('group.up')}</option>
            <option value="down">{t('group.down')}</option>
          </select>
        </label>
      )}
      <ErrorText error={action.error} />
    </fieldset>
  );
}
