import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ErrorText } from '../ui';
import { t } from '../i18n';
import type { MessageKey } from '../i18n/en';
import { gateway, type BaseAccess } from './base';
import { cellText } from './search';
import type { Table } from '../types';

interface FunctionInfo {
  name: string;
  category: string;
  min_args: number;
  max_args: number | null;
}
interface Preview {
  result_type: string;
  rows: Array<{ _id: string; value: unknown }>;
}

const PREVIEW_ROWS = 5;
const help = (name: string) => t(`fn.${name.toLowerCase()}` as MessageKey);

/**
 * The formula of a new formula column: a text box, the table's columns and the function library
 * (from the server, with help from the catalogue) to insert at the cursor, and a live preview of
 * the first rows computed by the server (`formula-preview/`: the formulas module's own evaluator,
 * nothing stored) — or the server's error with its position.
 */
export function FormulaBuilder({ access, table, formula, onChange }: { access: BaseAccess; table: Table; formula: string; onChange: (formula: string) => void }) {
  const box = useRef<HTMLTextAreaElement>(null);
  const [find, setFind] = useState('');
  const functions = useQuery(['formula-functions', access.dtable_uuid], () => gateway<{ functions: FunctionInfo[] }>(access, 'formula-functions/').then((r) => r.functions), {
    staleTime: Infinity,
  });
  // The preview follows the typing after a pause.
  const [settled, setSettled] = useState(formula);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(formula), 350);
    return () => clearTimeout(timer);
  }, [formula]);
  const preview = useQuery(
    ['formula-preview', access.dtable_uuid, table.name, settled],
    ({ signal }) => gateway<Preview>(access, 'formula-preview/', { method: 'POST', body: { table_name: table.name, formula: settled, limit: PREVIEW_ROWS }, signal }),
    { enabled: settled.trim() !== '', retry: false, keepPreviousData: true },
  );
  const firstRows = useQuery(['formula-preview-rows', access.dtable_uuid, table.name], () =>
    gateway<{ rows: Array<Record<string, unknown>> }>(access, `rows/?table_name=${encodeURIComponent(table.name)}&limit=${PREVIEW_ROWS}&convert_keys=true`),
  );

  /** Puts text at the cursor (replacing a selection) and leaves the cursor after it. */
  const insert = (text: string) => {
    const el = box.current;
    const start = el?.selectionStart ?? formula.length;
    const end = el?.selectionEnd ?? formula.length;
    onChange(formula.slice(0, start) + text + formula.slice(end));
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(start + text.length, start + text.length);
    });
  };

  const shown = useMemo(() => {
    const needle = find.trim().toLowerCase();
    const list = functions.data ?? [];
    return needle ? list.filter((f) => f.name.includes(needle) || help(f.name).toLowerCase().includes(needle)) : list;
  }, [functions.data, find]);
  const categories = [...new Set(shown.map((f) => f.category))];
  const firstName = table.columns[0]?.name;

  return (
    <div className="formula-builder">
      <div className="formula-input">
        <label htmlFor="formula-text">{t('formula.label')}</label>
        <textarea id="formula-text" ref={box} value={formula} onChange={(e) => onChange(e.target.value)} rows={3} maxLength={10_000} spellCheck={false} required aria-describedby="formula-hint" />
      </div>
      <p id="formula-hint" className="muted small">
        {t('formula.hint')}
      </p>
      <div className="formula-parts">
        <section aria-label={t('formula.columns')}>
          <h3>{t('formula.columns')}</h3>
          <ul className="plain">
            {table.columns.map((c) => (
              <li key={c.key}>
                <button type="button" className="ghost" aria-label={t('formula.insert', { name: `{${c.name}}` })} onClick={() => insert(`{${c.name}}`)}>
                  {`{${c.name}}`}
                </button>
              </li>
            ))}
          </ul>
        </section>
        <section aria-label={t('formula.functions')}>
          <h3>{t('formula.functions')}</h3>
          <input type="search" aria-label={t('formula.filter')} placeholder={t('formula.filter')} value={find} onChange={(e) => setFind(e.target.value)} />
          <ErrorText error={functions.error} />
          <div className="function-list">
            {categories.map((category) => (
              <div key={category} role="group" aria-label={t(`formula.category.${category}` as MessageKey)}>
                <h4>{t(`formula.category.${category}` as MessageKey)}</h4>
                <dl>
                  {shown
                    .filter((f) => f.category === category)
                    .map((f) => (
                      <div key={f.name}>
                        <dt>
                          <button type="button" className="ghost" aria-label={t('formula.insert', { name: f.name })} onClick={() => insert(`${f.name}(`)}>
                            {f.name}
                          </button>
                        </dt>
                        <dd className="small">{help(f.name)}</dd>
                      </div>
                    ))}
                </dl>
              </div>
            ))}
            {functions.data && shown.length === 0 && <p className="muted">{t('formula.noFunction')}</p>}
          </div>
        </section>
      </div>
      <section aria-label={t('formula.preview')} aria-live="polite">
        <h3>{t('formula.preview')}</h3>
        {preview.isFetching && <span className="muted small">{t('formula.previewing')}</span>}
        {preview.error && settled.trim() !== '' ? <ErrorText error={preview.error} /> : null}
        {preview.data && !preview.error && (
          <>
            <p className="small">{t('formula.resultType', { type: preview.data.result_type })}</p>
            <table className="list preview">
              <tbody>
                {preview.data.rows.map((r) => {
                  const row = firstRows.data?.rows.find((x) => x._id === r._id);
                  return (
                    <tr key={r._id}>
                      <th scope="row">{firstName && row ? cellText(row[firstName]) : r._id}</th>
                      <td>{r.value === null ? <span className="muted">{t('formula.empty')}</span> : cellText(r.value)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </>
        )}
      </section>
    </div>
  );
}
