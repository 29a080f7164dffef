import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, Loading, TableViewPicker, useAction } from '../ui';
import { useBaseAccess, useMetadata } from '../grid/base';
import { FilterEditor, toApiFilters, type DraftFilter } from '../grid/FilterEditor';

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
      <h2>Notification rules</h2>
      <RuleBuilder workspaceId={workspaceId} baseName={baseName} onCreated={() => client.invalidateQueries(key)} />
      <ErrorText error={action.error} />
      {rules.isLoading ? (
        <Loading />
      ) : rules.error ? (
        <ErrorText error={rules.error} />
      ) : rules.data?.length === 0 ? (
        <Empty>No rules.</Empty>
      ) : (
        <ul className="plain" aria-label="Rules">
          {rules.data?.map((r) => (
            <li key={r.id}>
              <RuleLine rule={r} />{' '}
              <ConfirmButton
                label="Delete"
                question={`Delete the rule “${String(r.trigger.rule_name ?? r.id)}”?`}
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
        <span className="tag bad" title="Its table, view or column was removed, or it did not trigger for 180 days">
          invalid: its table, view or column no longer exists (or it was idle 180 days)
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
  if (metadata.isLoading || access.isLoading) return <Loading what="Loading tables" />;
  const tables = metadata.data?.tables ?? [];
  const table = tables.find((t) => t._id === tableId) ?? tables[0];
  if (!table) return <ErrorText error={access.error ?? metadata.error} />;
  const view = table.views.find((v) => v._id === viewId) ?? table.views[0];
  const people = [...(user ? [{ email: user.email, label: `${user.name} (me)` }] : []), ...(shares.data ?? []).map((s) => ({ email: s.email, label: s.name || s.contact_email }))];
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
    <form className="panel" onSubmit={submit} aria-label="New rule">
      <div className="inline">
        <input aria-label="Rule name" placeholder="Rule name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        <select aria-label="Rule type" value={condition} onChange={(e) => setCondition(e.target.value)}>
          {CONDITIONS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {condition !== 'near_deadline' && (
          <select aria-label="Run condition" value={runCondition} onChange={(e) => setRunCondition(e.target.value)}>
            <option value="per_update">on every update</option>
            <option value="per_day">daily digest</option>
            <option value="per_week">weekly digest</option>
          </select>
        )}
        <TableViewPicker label="Rule" tables={tables} table={table} viewId={view?._id} onTable={(id) => { setTableId(id); setViewId(''); }} onView={setViewId} />
      </div>
      {condition === 'filters_satisfy' && <FilterEditor table={table} filters={filters} onChange={setFilters} conjunction={conjunction} onConjunction={setConjunction} />}
      {condition === 'near_deadline' && (
        <div className="inline">
          <select aria-label="Date column" value={dateColumn} onChange={(e) => setDateColumn(e.target.value)} required>
            <option value="">date column…</option>
            {table.columns.filter((c) => c.type === 'date').map((c) => (
              <option key={c.key} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
          <input aria-label="Days before" type="number" min={0} value={alarmDays} onChange={(e) => setAlarmDays(e.target.value)} />
          <input aria-label="Hour of day" type="number" min={0} max={23} value={notifyHour} onChange={(e) => setNotifyHour(e.target.value)} />
        </div>
      )}
      <fieldset>
        <legend>Notify</legend>
        {people.map((p) => (
          <label key={p.email} className="check">
            <input type="checkbox" checked={users.includes(p.email)} onChange={(e) => setUsers(e.target.checked ? [...users, p.email] : users.filter((u) => u !== p.email))} />
            {p.label}
          </label>
        ))}
        <select aria-label="Users in column" value={usersColumn} onChange={(e) => setUsersColumn(e.target.value)}>
          <option value="">(and users in column…)</option>
          {table.columns.filter((c) => c.type === 'collaborator').map((c) => (
            <option key={c.key} value={c.key}>
              {c.name}
            </option>
          ))}
        </select>
      </fieldset>
      <input aria-label="Message" placeholder="Message" value={message} onChange={(e) => setMessage(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        Create rule
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
