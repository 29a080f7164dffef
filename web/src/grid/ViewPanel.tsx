import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ConfirmButton, ErrorText, useAction } from '../ui';
import { gateway, q, type BaseAccess } from './base';
import { FilterEditor, toApiFilters, fromApiFilters, type DraftFilter } from './FilterEditor';
import type { Sort, Table, View } from '../types';
import { t } from '../i18n';

/** A view's filters, conjunction and sorts, saved with PUT …/views/<name>/; plus new and delete view. */
export function ViewPanel({ access, table, view, onViewChange }: { access: BaseAccess; table: Table; view: View; onViewChange: (name: string) => void }) {
  const client = useQueryClient();
  const [filters, setFilters] = useState<DraftFilter[]>(fromApiFilters(table, view.filters));
  const [conjunction, setConjunction] = useState(view.filter_conjunction);
  const [sorts, setSorts] = useState<Sort[]>(view.sorts);
  const action = useAction();
  const refresh = () => client.invalidateQueries(['metadata', access.dtable_uuid]);
  const viewPath = `views/${encodeURIComponent(view.name)}/?${q({ table_name: table.name })}`;
  const save = () =>
    action.run(async () => {
      await gateway(access, viewPath, { method: 'PUT', body: { table_name: table.name, filters: toApiFilters(table, filters), filter_conjunction: conjunction, sorts } });
      await refresh();
    });
  return (
    <div className="panel" aria-label={t('viewPanel.filterAndSort')}>
      <FilterEditor table={table} filters={filters} onChange={setFilters} conjunction={conjunction} onConjunction={setConjunction} />
      <h3>{t('viewPanel.sorts')}</h3>
      {sorts.map((s, i) => (
        <div key={i} className="inline">
          <select aria-label={t('viewPanel.sortValueColumn', { value: i + 1 })} value={s.column_key} onChange={(e) => setSorts(sorts.map((x, j) => (j === i ? { ...x, column_key: e.target.value } : x)))}>
            {table.columns.map((c) => (
              <option key={c.key} value={c.key}>
                {c.name}
              </option>
            ))}
          </select>
          <select aria-label={t('viewPanel.sortValueDirection', { value: i + 1 })} value={s.sort_type} onChange={(e) => setSorts(sorts.map((x, j) => (j === i ? { ...x, sort_type: e.target.value as 'up' | 'down' } : x)))}>
            <option value="up">{t('viewPanel.ascending')}</option>
            <option value="down">{t('viewPanel.descending')}</option>
          </select>
          <button type="button" aria-label={t('viewPanel.removeSortValue', { value: i + 1 })} onClick={() => setSorts(sorts.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setSorts([...sorts, { column_key: table.columns[0]!.key, sort_type: 'up' }])}>
        {t('viewPanel.sort')}
      </button>
      <div className="inline">
        <button type="button" className="primary" onClick={() => void save()} disabled={action.busy}>
          {t('viewPanel.saveView')}
        </button>
        <button
          type="button"
          onClick={() => {
            const name = window.prompt(t('viewPanel.nameOfTheNew'));
            if (name)
              void action.run(async () => {
                await gateway(access, `views/?${q({ table_name: table.name })}`, { method: 'POST', body: { table_name: table.name, name } });
                await refresh();
                onViewChange(name);
              });
          }}
        >
          {t('viewPanel.newView')}
        </button>
        <ConfirmButton
          label={t('viewPanel.deleteView')}
          question={t('viewPanel.deleteTheViewName', { name: view.name })}
          disabled={table.views.length < 2}
          onConfirm={() =>
            void action.run(async () => {
              await gateway(access, viewPath, { method: 'DELETE', body: { table_name: table.name } });
              onViewChange(table.views.find((v) => v._id !== view._id)!.name);
              await refresh();
            })
          }
        />
      </div>
      <ErrorText error={action.error} />
    </div>
  );
}
