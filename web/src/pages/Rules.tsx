import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, Loading, TableViewPicker, useAction } from '../ui';
import { useBaseAccess, useMetadata } from '../grid/base';
import { FilterEditor, toApiFilters, type DraftFilter } from '../grid/FilterEditor';
import { t } from '../i18n';

export interface Rule {
  id: number;
  dtable_uuid: string;
  run_condition: string;
  trigger: Record<string, unknown>;
  action: Record<string, unknown>;
  creator: string;
  ctime: string;
  last_trigger_time: string;
  is_valid: number;
}

const CONDITIONS: Array<[string, string]> = [
  ['rows_modified', 'A row is modified'],
  ['rows_added', 'A row is added'],
  ['filters_satisfy', 'A row comes to match filters'],
  ['near_deadline', 'A date is near'],
];

/** Notification rules of a base: a builder for the rule types, the list with invalid rules flagged. */
export function Rules({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const key = ['rules', workspaceId, baseName];
  const rules = useQuery(key, () => api<{ dtable_notification_rule_list: Rule[] }>(basePath(workspaceId, baseName, 'notification-rules/')).then((r) => r.dtable_notification_rule_list));
  const action = useAction();
  return (
    <>
      <h2>{t('rules.notificationRules')}</h2>
      <RuleBuilder workspaceId={workspaceId} baseName={baseName} onCreated={() => client.invalidateQueries(key)} />
      <ErrorText error={action.error} />
      {rules.isLoading ? (
        <Loading />
      ) : rules.error ? (
        <ErrorText error={rules.error} />
      ) : rules.data?.length === 0 ? (
        <Empty>{t('rules.noRules')}</Empty>
      ) : (
        <ul className="plain" aria-label={t('rules.rules')}>
          {rules.data?.map((r) => (
            <li key={r.id}>
              <RuleLine rule={r} />{' '}
              <ConfirmButton
                label={t('common.delete')}
                question={t('rules.deleteTheRuleString', { name: String(r.trigger.rule_name ?? r.id) })}
                onConfirm={() =>
                  void action.run(async () => {
                    await api(basePath(workspaceId, baseName, `notification-rules/${r.id}/`), { method: 'DELETE' });
                    await client.invalidateQueries(key);
                  })
                }
              />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function RuleLine({ rule }: { rule: Rule }) {
  return (
    <>
      <strong>{String(rule.trigger.rule_name ?? `Rule ${rule.id}`)}</strong> <span className="muted">{String(rule.trigger.condition)} · {rule.run_condition}</span>{' '}
      {rule.is_valid ? null : (
        <span className="tag bad" title={t('rules.itsTableViewOr')}>
          {t('rules.invalidItsTableView')}
        </span>
      )}
    </>
  );
}

function RuleBuilder({ workspaceId, baseName, onCreated }: { workspaceId: string; baseName: string; onCreated: () => unknown }) {
  const { user } = useSession();
  const access = useBaseAccess(workspaceId, baseName);
  const metadata = useMetadata(access.data);
  const shares = useQuery(['shares', workspaceId, baseName], () =>
    api<{ user_list: Array<{ email: string; name: string; contact_email: string }> }>(basePath(workspaceId, baseName, 'share/')).then((r) => r.user_list),
  );
  const [name, setName] = useState('');
  const [condition, setCondition] = useState('rows_modified');
  const [runCondition, setRunCondition] = useState('per_update');
  const [tableId, setTableId] = useState('');
  const [viewId, setViewId] = useState('');
  const [users, setUsers] = useState<string[]>([]);
  const [usersColumn, setUsersColumn] = useState('');
  const [message, setMessage] = useState('');
  const [filters, setFilters] = useState<DraftFilter[]>([]);
  const [conjunction, setConjunction] = useState<'And' | 'Or'>('And');
  const [dateColumn, setDateColumn] = useState('');
  const [alarmDays, setAlarmDays] = useState('1');
  const [notifyHour, setNotifyHour] = useState('9');
  const action = useAction();
  if (metadata.isLoading || access.isLoading) return <Loading what={t('common.loadingTables')} />;
  const tables = metadata.data?.tables ?? [];
  const table = tables.find((t) => t._id === tableId) ?? tables[0];
  if (!table) return <ErrorText error={access.error ?? metadata.error} />;
  const view = table.views.find((v) => v._id === viewId) ?? table.views[0];
  const people = [...(user ? [{ email: user.email, label: t('rules.personMe', { name: user.name }) }] : []), ...(shares.data ?? []).map((s) => ({ email: s.email, label: s.name || s.contact_email }))];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const trigger: Record<string, unknown> = { rule_name: name, table_id: table._id, view_id: view?._id, condition };
      if (condition === 'filters_satisfy') Object.assign(trigger, { filters: toApiFilters(table, filters), filter_conjunction: conjunction, watch_all_columns: true });
      if (condition === 'near_deadline') Object.assign(trigger, { date_column_name: dateColumn, alarm_days: Number(alarmDays), notify_hour: Number(notifyHour) });
      await api(basePath(workspaceId, baseName, 'notification-rules/'), {
        method: 'POST',
        body: {
          run_condition: condition === 'near_deadline' ? 'per_day' : runCondition,
          trigger,
          action: { type: 'notify', users, users_column_key: usersColumn, default_msg: message },
        },
      });
      setName('');
      await onCreated();
    });
  };
  return (
    <form className="panel" onSubmit={submit} aria-label={t('rules.newRule')}>
      <div className="inline">
        <input aria-label={t('rules.ruleName')} placeholder={t('rules.ruleName')} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        <select aria-label={t('rules.ruleType')} value={condition} onChange={(e) => setCondition(e.target.value)}>
          {CONDITIONS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {condition !== 'near_deadline' && (
          <select aria-label={t('rules.runCondition')} value={runCondition} onChange={(e) => setRunCondition(e.target.value)}>
            <option value="per_update">{t('rules.onEveryUpdate')}</option>
            <option value="per_day">{t('rules.dailyDigest')}</option>
            <option value="per_week">{t('rules.weeklyDigest')}</option>
          </select>
        )}
        <TableViewPicker label={t('rules.rule')} tables={tables} table={table} viewId={view?._id} onTable={(id) => { setTableId(id); setViewId(''); }} onView={setViewId} />
      </div>
      {condition === 'filters_satisfy' && <FilterEditor table={table} filters={filters} onChange={setFilters} conjunction={conjunction} onConjunction={setConjunction} />}
      {condition === 'near_deadline' && (
        <div className="inline">
          <select aria-label={t('common.dateColumn')} value={dateColumn} onChange={(e) => setDateColumn(e.target.value)} required>
            <option value="">{t('common.dateColumn2')}</option>
            {table.columns.filter((c) => c.type === 'date').map((c) => (
              <option key={c.key} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
          <input aria-label={t('common.daysBefore')} type="number" min={0} value={alarmDays} onChange={(e) => setAlarmDays(e.target.value)} />
          <input aria-label={t('common.hourOfDay')} type="number" min={0} max={23} value={notifyHour} onChange={(e) => setNotifyHour(e.target.value)} />
        </div>
      )}
      <fieldset>
        <legend>{t('common.notify')}</legend>
        {people.map((p) => (
          <label key={p.email} className="check">
            <input type="checkbox" checked={users.includes(p.email)} onChange={(e) => setUsers(e.target.checked ? [...users, p.email] : users.filter((u) => u !== p.email))} />
            {p.label}
          </label>
        ))}
        <select aria-label={t('rules.usersInColumn')} value={usersColumn} onChange={(e) => setUsersColumn(e.target.value)}>
          <option value="">{t('common.andUsersInColumn')}</option>
          {table.columns.filter((c) => c.type === 'collaborator').map((c) => (
            <option key={c.key} value={c.key}>
              {c.name}
            </option>
          ))}
        </select>
      </fieldset>
      <input aria-label={t('rules.message')} placeholder={t('rules.message')} value={message} onChange={(e) => setMessage(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        {t('rules.createRule')}
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
