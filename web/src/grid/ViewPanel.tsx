import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ConfirmButton, ErrorText, useAction } from '../ui';
import { gateway, q, type BaseAccess } from './base';
import { FilterEditor, toApiFilters, fromApiFilters, type DraftFilter } from './FilterEditor';
import type { Sort, Table, View } from '../types';

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
    <div className="panel" aria-label="Filter and sort">
      <FilterEditor table={table} filters={filters} onChange={setFilters} conjunction={conjunction} onConjunction={setConjunction} />
      <h3>Sorts</h3>
      {sorts.map((s, i) => (
        <div key={i} className="inline">
          <select aria-label={`Sort ${i + 1} column`} value={s.column_key} onChange={(e) => setSorts(sorts.map((x, j) => (j === i ? { ...x, column_key: e.target.value } : x)))}>
            {table.columns.map((c) => (
              <option key={c.key} value={c.key}>
                {c.name}
              </option>
            ))}
          </select>
          <select aria-label={`Sort ${i + 1} direction`} value={s.sort_type} onChange={(e) => setSorts(sorts.map((x, j) => (j === i ? { ...x, sort_type: e.target.value as 'up' | 'down' } : x)))}>
            <option value="up">ascending</option>
            <option value="down">descending</option>
          </select>
          <button type="button" aria-label={`Remove sort ${i + 1}`} onClick={() => setSorts(sorts.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setSorts([...sorts, { column_key: table.columns[0]!.key, sort_type: 'up' }])}>
        + Sort
      </button>
      <div className="inline">
        <button type="button" className="primary" onClick={() => void save()} disabled={action.busy}>
          Save view
        </button>
        <button
          type="button"
          onClick={() => {
            const name = window.prompt('Name of the new view');
            if (name)
              void action.run(async () => {
                await gateway(access, `views/?${q({ table_name: table.name })}`, { method: 'POST', body: { table_name: table.name, name } });
                await refresh();
                onViewChange(name);
              });
          }}
        >
          New view
        </button>
        <ConfirmButton
          label="Delete view"
          question={`Delete the view “${view.name}”?`}
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
