import { DATE_MODIFIERS, predicatesFor } from './column-types';
import type { Filter, Table } from '../types';
import { t } from '../i18n';

/** A filter as edited: the term is always text until it is sent. */
export interface DraftFilter {
  column_key: string;
  filter_predicate: string;
  term: string;
  modifier: string;
}

const NO_TERM = new Set(['is_empty', 'is_not_empty']);
const LIST = new Set(['is_any_of', 'is_none_of', 'has_any_of', 'has_all_of', 'has_none_of', 'is_exactly']);

export function fromApiFilters(table: Table, filters: Filter[]): DraftFilter[] {
  return filters.map((f) => {
    const column = table.columns.find((c) => c.key === f.column_key || c.name === f.column_name);
    const t = f.filter_term;
    return {
      column_key: column?.key ?? '',
      filter_predicate: f.filter_predicate,
      term: Array.isArray(t) ? t.join(', ') : t === undefined || t === null ? '' : String(t),
      modifier: f.filter_term_modifier ?? '',
    };
  });
}

export function toApiFilters(table: Table, drafts: DraftFilter[]): Filter[] {
  return drafts.map((d) => {
    const column = table.columns.find((c) => c.key === d.column_key);
    const type = column?.type ?? 'text';
    const filter: Filter = { column_key: d.column_key, filter_predicate: d.filter_predicate };
    if (NO_TERM.has(d.filter_predicate)) return filter;
    if (LIST.has(d.filter_predicate)) filter.filter_term = d.term.split(',').map((s) => s.trim()).filter(Boolean);
    else if (type === 'checkbox') filter.filter_term = d.term === 'true';
    else if (['number', 'rate', 'duration'].includes(type)) filter.filter_term = d.term === '' ? '' : Number(d.term);
    else filter.filter_term = d.term;
    if (['date', 'ctime', 'mtime'].includes(type)) filter.filter_term_modifier = d.modifier || 'exact_date';
    return filter;
  });
}

export function FilterEditor(props: {
  table: Table;
  filters: DraftFilter[];
  onChange: (f: DraftFilter[]) => void;
  conjunction: 'And' | 'Or';
  onConjunction: (c: 'And' | 'Or') => void;
  /** Put before every label, for a second filter editor in the same form (e.g. "Action 2 linked "). */
  labelPrefix?: string;
}) {
  const { table, filters, onChange } = props;
  const pre = props.labelPrefix ?? '';
  const set = (i: number, patch: Partial<DraftFilter>) => onChange(filters.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <div>
      <h3>
        {t('filterEditor.filters')}{' '}
        <select aria-label={t('filterEditor.prefilterConjunction', { pre })} value={props.conjunction} onChange={(e) => props.onConjunction(e.target.value as 'And' | 'Or')}>
          <option value="And">{t('filterEditor.allMustMatchAnd')}</option>
          <option value="Or">{t('filterEditor.anyMayMatchOr')}</option>
        </select>
      </h3>
      {filters.map((f, i) => {
        const column = table.columns.find((c) => c.key === f.column_key);
        const type = column?.type ?? 'text';
        const predicates = predicatesFor(type);
        return (
          <div key={i} className="inline">
            <select
              aria-label={t('filterEditor.prefilterValueColumn', { pre, value: i + 1 })}
              value={f.column_key}
              onChange={(e) => {
                const t = table.columns.find((c) => c.key === e.target.value)?.type ?? 'text';
                set(i, { column_key: e.target.value, filter_predicate: predicatesFor(t)[0]!, term: '', modifier: '' });
              }}
            >
              {table.columns.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.name}
                </option>
              ))}
            </select>
            <select aria-label={t('filterEditor.prefilterValuePredicate', { pre, value: i + 1 })} value={f.filter_predicate} onChange={(e) => set(i, { filter_predicate: e.target.value })}>
              {predicates.map((p) => (
                <option key={p} value={p}>
                  {p.replace(/_/g, ' ')}
                </option>
              ))}
            </select>
            {['date', 'ctime', 'mtime'].includes(type) && !NO_TERM.has(f.filter_predicate) && (
              <select aria-label={t('filterEditor.prefilterValueDate', { pre, value: i + 1 })} value={f.modifier || 'exact_date'} onChange={(e) => set(i, { modifier: e.target.value })}>
                {DATE_MODIFIERS.map((m) => (
                  <option key={m} value={m}>
                    {m.replace(/_/g, ' ')}
                  </option>
                ))}
              </select>
            )}
            {!NO_TERM.has(f.filter_predicate) &&
              (type === 'checkbox' ? (
                <select aria-label={t('filterEditor.prefilterValueValue', { pre, value: i + 1 })} value={f.term || 'true'} onChange={(e) => set(i, { term: e.target.value })}>
                  <option value="true">{t('filterEditor.checked')}</option>
                  <option value="false">{t('filterEditor.notChecked')}</option>
                </select>
              ) : (
                <input aria-label={t('filterEditor.prefilterValueValue', { pre, value: i + 1 })} value={f.term} onChange={(e) => set(i, { term: e.target.value })} placeholder={LIST.has(f.filter_predicate) ? 'a, b, c' : t('filterEditor.value')} />
              ))}
            <button type="button" aria-label={t('filterEditor.preremoveFilterValue', { pre, value: i + 1 })} onClick={() => onChange(filters.filter((_, j) => j !== i))}>
              ✕
            </button>
          </div>
        );
      })}
      <button
        type="button"
        aria-label={pre ? t('filterEditor.preFilter', { pre }) : undefined}
        onClick={() => {
          const first = table.columns[0]!;
          onChange([...filters, { column_key: first.key, filter_predicate: predicatesFor(first.type)[0]!, term: '', modifier: '' }]);
        }}
      >
        {t('filterEditor.filter')}
      </button>
    </div>
  );
}
