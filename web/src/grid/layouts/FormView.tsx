import { useState, type FormEvent } from 'react';
import { t } from '../../i18n';
import type { Column } from '../../types';
import { isEditable } from '../column-types';
import { pastedValue } from '../clipboard';
import { ErrorText } from '../../ui';

/** Column types the form asks for (links and collaborators need pickers: set them in the grid). */
const ASKED = (c: Column) => isEditable(c.type) && c.type !== 'link' && c.type !== 'collaborator';

/**
 * A form a person fills in to add a row: one labelled field per editable column, typed per column
 * (number, date, select, checkbox, text…), converted as a pasted cell would be; "Add row" appends it.
 */
export function FormView({ columns, onSubmit }: { columns: readonly Column[]; onSubmit: (values: Record<string, unknown>) => Promise<unknown> }) {
  const fields = columns.filter(ASKED);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [state, setState] = useState<{ busy: boolean; error: unknown; added: number }>({ busy: false, error: null, added: 0 });
  const set = (name: string, value: string | boolean) => setValues((v) => ({ ...v, [name]: value }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const row: Record<string, unknown> = {};
    for (const c of fields) {
      const v = values[c.name];
      if (v === undefined || v === '') continue;
      const value = typeof v === 'boolean' ? v : pastedValue(c, v);
      if (value !== undefined && value !== null) row[c.name] = value;
    }
    setState((s) => ({ ...s, busy: true, error: null }));
    try {
      await onSubmit(row);
      setValues({});
      setState((s) => ({ busy: false, error: null, added: s.added + 1 }));
    } catch (error) {
      setState((s) => ({ ...s, busy: false, error }));
    }
  };
  return (
    <form className="panel row-form form-view" aria-label={t('form.label')} onSubmit={(e) => void submit(e)}>
      <div className="fields">
        {fields.map((c) => {
          const id = `form-${c.key}`;
          const value = values[c.name];
          const text = typeof value === 'string' ? value : '';
          return (
            <div key={c.key} className="field">
              <label htmlFor={id} className="field-name">
                {c.name}
              </label>
              <div className="field-value">
                {c.type === 'checkbox' ? (
                  <input id={id} type="checkbox" checked={value === true} onChange={(e) => set(c.name, e.target.checked)} />
                ) : c.type === 'single-select' ? (
                  <select id={id} value={text} onChange={(e) => set(c.name, e.target.value)}>
                    <option value="">{t('form.none')}</option>
                    {(c.data?.options ?? []).map((o) => (
                      <option key={o.id ?? o.name}>{o.name}</option>
                    ))}
                  </select>
                ) : c.type === 'long-text' ? (
                  <textarea id={id} value={text} onChange={(e) => set(c.name, e.target.value)} rows={3} />
                ) : (
                  <input
                    id={id}
                    type={c.type === 'number' || c.type === 'rate' ? 'number' : c.type === 'date' ? 'date' : c.type === 'email' ? 'email' : c.type === 'url' ? 'url' : 'text'}
                    step="any"
                    value={text}
                    onChange={(e) => set(c.name, e.target.value)}
                  />
                )}
              </div>
            </div>
          );
        })}
      </div>
      <div className="actions inline">
        <button type="submit" disabled={state.busy}>
          {t('form.submit')}
        </button>
        {state.added > 0 && (
          <span role="status" className="good">
            {t('form.added', { count: state.added })}
          </span>
        )}
      </div>
      <ErrorText error={state.error} />
    </form>
  );
}
