import { useState } from 'react';
import { FilterEditor, fromApiFilters, toApiFilters, type DraftFilter } from '../grid/FilterEditor';
import type { Table } from '../types';
import { t } from '../i18n';

type Action = Record<string, unknown> & { _id: string; type: string };
type Match = { column_key: string; other_column_key: string };

/**
 * The fields of a `link_records` action: the link column, any number of match conditions (a column of
 * this table equals a column of the linked table) and filters on the linked table. The API wants at
 * least one condition or one filter. The filters are kept as drafts here (a half-typed list or number
 * would not survive a round trip through the API form) and written to the action on every change.
 */
export function LinkRecordsFields({ n, action, table, tables, onChange }: { n: number; action: Action; table: Table; tables: Table[]; onChange: (a: Action) => void }) {
  const links = table.columns.filter((c) => c.type === 'link');
  const link = links.find((c) => c.data?.link_id === action.link_id);
  const otherId = link ? (link.data?.table_id === table._id ? link.data?.other_table_id : link.data?.table_id) : undefined;
  const other = tables.find((x) => x._id === otherId);
  const matches = (action.match_conditions as Match[] | undefined) ?? [];
  const [drafts, setDrafts] = useState<DraftFilter[]>(() => (other && Array.isArray(action.filters) ? fromApiFilters(other, action.filters as never) : []));
  const conjunction = action.filter_conjunction === 'Or' ? 'Or' : 'And';

  const setMatches = (next: Match[]) => onChange({ ...action, match_conditions: next });
  const setMatch = (i: number, patch: Partial<Match>) => setMatches(matches.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  const setFilters = (next: DraftFilter[]) => {
    setDrafts(next);
    onChange({ ...action, filters: other ? toApiFilters(other, next) : [], filter_conjunction: conjunction });
  };
  const setLink = (linkId: string) => {
    // Another link may lead to another table: its columns and filters no longer apply.
    setDrafts([]);
    onChange({ ...action, link_id: linkId, match_conditions: matches.map((m) => ({ column_key: m.column_key, other_column_key: '' })), filters: [], filter_conjunction: conjunction });
  };

  return (
    <div>
      <select aria-label={t('linkRecordsFields.actionNLinkColumn', { n })} value={String(action.link_id ?? '')} onChange={(e) => setLink(e.target.value)}>
        <option value="">{t('linkRecordsFields.linkColumn')}</option>
        {links.map((c) => (
          <option key={c.key} value={String(c.data?.link_id ?? '')}>
            {c.name}
          </option>
        ))}
      </select>
      <ol className="plain" aria-label={t('linkRecordsFields.actionNMatchConditions', { n })}>
        {matches.map((m, i) => (
          <li key={i} className="inline">
            <select aria-label={t('linkRecordsFields.actionNMatchValue', { n, value: i + 1 })} value={m.column_key} onChange={(e) => setMatch(i, { column_key: e.target.value })}>
              {table.columns.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.name}
                </option>
              ))}
            </select>
            <span>{t('linkRecordsFields.equals')}</span>
            <select aria-label={t('linkRecordsFields.actionNMatchValue2', { n, value: i + 1 })} value={m.other_column_key} onChange={(e) => setMatch(i, { other_column_key: e.target.value })}>
              <option value="">{t('linkRecordsFields.columnOfTheLinked')}</option>
              {(other?.columns ?? []).map((c) => (
                <option key={c.key} value={c.key}>
                  {c.name}
                </option>
              ))}
            </select>
            <button type="button" onClick={() => setMatches(matches.filter((_, j) => j !== i))}>
              {t('linkRecordsFields.removeMatch', { match: i + 1, action: n })}
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => setMatches([...matches, { column_key: table.columns[0]?.key ?? '', other_column_key: '' }])} disabled={matches.length >= 10}>{t('linkRecordsFields.addMatchConditionTo', { n })}</button>
      {other ? (
        <FilterEditor
          table={other}
          filters={drafts}
          onChange={setFilters}
          conjunction={conjunction}
          onConjunction={(c) => onChange({ ...action, filter_conjunction: c })}
          labelPrefix={t('linkRecordsFields.filterPrefix', { n })}
        />
      ) : (
        <span className="muted">{t('linkRecordsFields.chooseALinkColumn')}</span>
      )}
    </div>
  );
}
