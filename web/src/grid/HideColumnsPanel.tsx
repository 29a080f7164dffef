import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ErrorText, useAction } from '../ui';
import { t } from '../i18n';
import { gateway, q, type BaseAccess } from './base';
import type { Table, View } from '../types';

/** Which columns the view shows, saved on the view (`hidden_columns`) at each change. */
export function HideColumnsPanel({ access, table, view }: { access: BaseAccess; table: Table; view: View }) {
  const client = useQueryClient();
  const action = useAction();
  // Shown at once; the grid follows when the saved view comes back.
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set(view.hidden_columns ?? []));
  const save = (next: Set<string>) => {
    setHidden(next);
    return action.run(async () => {
      await gateway(access, `views/${encodeURIComponent(view.name)}/?${q({ table_name: table.name })}`, {
        method: 'PUT',
        body: { table_name: table.name, hidden_columns: [...next] },
      });
      await client.invalidateQueries(['metadata', access.dtable_uuid]);
    });
  };
  return (
    <fieldset className="panel" aria-label={t('hide.label')}>
      <legend>{t('hide.legend', { view: view.name })}</legend>
      {table.columns.map((c, i) => (
        <label key={c.key} className="check">
          <input
            type="checkbox"
            // The first column names the row: it is always shown.
            disabled={i === 0}
            checked={!hidden.has(c.key)}
            onChange={(e) => {
              const next = new Set(hidden);
              if (e.target.checked) next.delete(c.key);
              else next.add(c.key);
              void save(next);
            }}
          />
          {c.name}
        </label>
      ))}
      <ErrorText error={action.error} />
    </fieldset>
  );
}
