import { useState, type FormEvent } from 'react';
import { api, basePath } from '../api';
import { ErrorText, TableViewPicker, useAction } from '../ui';
import { FilterEditor, fromApiFilters, toApiFilters, type DraftFilter } from '../grid/FilterEditor';
import type { Table } from '../types';
import { LinkRecordsFields } from './LinkRecordsFields';
import { t } from '../i18n';
import type { MessageKey } from '../i18n/en';

export interface Automation {
  id: number;
  run_condition: string;
  trigger: Record<string, unknown> & { rule_name?: string; condition?: string; table_id?: string; view_id?: string };
  actions: Array<Record<string, unknown> & { _id: string; type: string }>;
  creator: string;
  last_trigger_time: string;
  is_valid: boolean;
  trigger_count: number;
  invalid_reason?: string;
}

type Action = Automation['actions'][number];

/** Trigger conditions and action types, each with its catalogue text (t() when shown). */
export const TRIGGERS: Array<[string, MessageKey]> = [
  ['rows_added', 'trigger.rowsAdded'],
  ['filters_satisfy', 'trigger.filtersSatisfy'],
  ['near_deadline', 'trigger.nearDeadline'],
  ['run_periodically', 'trigger.runPeriodically'],
  ['run_periodically_by_condition', 'trigger.runPeriodicallyByCondition'],
];

const ACTION_TYPES: Array<[string, MessageKey]> = [
  ['notify', 'actionType.notify'],
  ['send_email', 'actionType.sendEmail'],
  ['update_record', 'actionType.updateRecord'],
  ['lock_record', 'actionType.lockRecord'],
  ['add_record', 'actionType.addRecord'],
  ['link_records', 'actionType.linkRecords'],
  ['call_webhook', 'actionType.callWebhook'],
  ['run_script', 'actionType.runScript'],
];
const NEEDS_ROW = new Set(['update_record', 'lock_record', 'link_records']);
const PERIODIC = new Set(['run_periodically', 'run_periodically_by_condition']);
const WITH_FILTERS = new Set(['filters_satisfy', 'rows_added', 'run_periodically_by_condition']);

function newAction(type: string, table: Table, n: number): Action {
  const _id = `${Date.now() % 1_000_000}${n}`;
  const first = table.columns[0]?.key ?? '0000';
  switch (type) {
    case 'update_record':
      return { _id, type, updates: { [first]: '' } };
    case 'add_record':
      return { _id, type, table_id: table._id, row: { [first]: '' } };
    case 'lock_record':
      return { _id, type, is_locked: true };
    case 'send_email':
      return { _id, type, send_to: '', subject: '', default_msg: '' };
    case 'link_records':
      return { _id, type, link_id: '', match_conditions: [{ column_key: first, other_column_key: '' }] };
    case 'call_webhook':
      return { _id, type, url: '', body: '' };
    case 'run_script':
      return { _id, type, script: "console.log(row && row._id);" };
    default:
      return { _id, type: 'notify', users: [], users_column_key: '', default_msg: '' };
  }
}

/**
 * The rule editor: trigger (table, view, condition, filters through the grid's filter editor, schedule)
 * and the list of actions. Creates a rule, or replaces one (`PUT`) when `editing` is given.
 */
export function AutomationEditor(props: { workspaceId: string; baseName: string; tables: Table[]; me: string; editing: Automation | null; onSaved: () => unknown; onCancel: () => void }) {
  const { tables, editing } = props;
  const t0 = editing?.trigger ?? {};
  const [name, setName] = useState(String(t0.rule_name ?? ''));
  const [condition, setCondition] = useState(String(t0.condition ?? 'rows_added'));
  const [runCondition, setRunCondition] = useState(editing && editing.run_condition !== 'per_update' ? editing.run_condition : 'per_day');
  const [tableId, setTableId] = useState(String(t0.table_id ?? tables[0]?._id ?? ''));
  const [viewId, setViewId] = useState(String(t0.view_id ?? ''));
  const table = tables.find((x) => x._id === tableId) ?? tables[0]!;
  const view = table.views.find((v) => v._id === viewId) ?? table.views[0];
  const [filters, setFilters] = useState<DraftFilter[]>(Array.isArray(t0.filters) ? fromApiFilters(table, t0.filters as never) : []);
  const [conjunction, setConjunction] = useState<'And' | 'Or'>(t0.filter_conjunction === 'Or' ? 'Or' : 'And');
  const [hour, setHour] = useState(String(t0.notify_hour ?? t0.notify_week_hour ?? t0.notify_month_hour ?? 9));
  const [day, setDay] = useState(String(t0.notify_week_day ?? t0.notify_month_day ?? 1));
  const [dateColumn, setDateColumn] = useState(String(t0.date_column_name ?? ''));
  const [alarmDays, setAlarmDays] = useState(String(t0.alarm_days ?? 1));
  const [actions, setActions] = useState<Action[]>(editing?.actions ?? [newAction('notify', table, 0)]);
  const [addType, setAddType] = useState('update_record');
  const action = useAction();
  const hasRow = condition !== 'run_periodically';
  const setAt = (i: number, next: Action) => setActions(actions.map((a, j) => (j === i ? next : a)));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const trigger: Record<string, unknown> = { rule_name: name, table_id: table._id, view_id: view?._id, condition };
      let run = 'per_update';
      if (WITH_FILTERS.has(condition)) Object.assign(trigger, { filters: toApiFilters(table, filters), filter_conjunction: conjunction });
      if (condition === 'filters_satisfy') trigger.watch_all_columns = true;
      if (condition === 'near_deadline') {
        run = 'per_day';
        Object.assign(trigger, { date_column_name: dateColumn, alarm_days: Number(alarmDays), notify_hour: Number(hour) });
      } else if (PERIODIC.has(condition)) {
        run = runCondition;
        if (run === 'per_day') trigger.notify_hour = Number(hour);
        if (run === 'per_week') Object.assign(trigger, { notify_week_day: Number(day), notify_week_hour: Number(hour) });
        if (run === 'per_month') Object.assign(trigger, { notify_month_day: Number(day), notify_month_hour: Number(hour) });
      }
      const body = { run_condition: run, trigger, actions };
      const path = basePath(props.workspaceId, props.baseName, editing ? `automation-rules/${editing.id}/` : 'automation-rules/');
      await api(path, { method: editing ? 'PUT' : 'POST', body });
      if (!editing) setName('');
      await props.onSaved();
    });
  };

  return (
    <form className="panel" onSubmit={submit} aria-label={editing ? t('automationEditor.editAutomation') : t('automationEditor.newAutomation')}>
      <h3>{editing ? t('automationEditor.editString', { name: String(t0.rule_name ?? editing.id) }) : t('automationEditor.newAutomation')}</h3>
      <div className="inline">
        <input aria-label={t('automationEditor.automationName')} placeholder={t('automationEditor.automationName')} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        <select aria-label={t('common.trigger')} value={condition} onChange={(e) => setCondition(e.target.value)}>
          {TRIGGERS.map(([v, l]) => (
            <option key={v} value={v}>
              {t(l)}
            </option>
          ))}
        </select>
        <TableViewPicker label={t('common.trigger')} tables={tables} table={table} viewId={view?._id} onTable={(id) => { setTableId(id); setViewId(''); setFilters([]); }} onView={setViewId} />
      </div>
      {PERIODIC.has(condition) && (
        <div className="inline">
          <select aria-label={t('automationEditor.schedule')} value={runCondition} onChange={(e) => setRunCondition(e.target.value)}>
            <option value="per_day">{t('automationEditor.everyDay')}</option>
            <option value="per_week">{t('automationEditor.everyWeek')}</option>
            <option value="per_month">{t('automationEditor.everyMonth')}</option>
          </select>
          {runCondition !== 'per_day' && <input aria-label={runCondition === 'per_week' ? t('automationEditor.weekday1Monday7') : t('automationEditor.dayOfMonth')} type="number" min={1} max={runCondition === 'per_week' ? 7 : 31} value={day} onChange={(e) => setDay(e.target.value)} />}
          <input aria-label={t('common.hourOfDay')} type="number" min={0} max={23} value={hour} onChange={(e) => setHour(e.target.value)} />
        </div>
      )}
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
          <input aria-label={t('common.hourOfDay')} type="number" min={0} max={23} value={hour} onChange={(e) => setHour(e.target.value)} />
        </div>
      )}
      {WITH_FILTERS.has(condition) && <FilterEditor table={table} filters={filters} onChange={setFilters} conjunction={conjunction} onConjunction={setConjunction} />}
      <fieldset>
        <legend>{t('common.actions')}</legend>
        <ol className="plain" aria-label={t('common.actions')}>
          {actions.map((a, i) => (
            <li key={a._id} aria-label={t('automationEditor.actionValue', { value: i + 1 })}>
              <ActionFields n={i + 1} action={a} table={table} tables={tables} me={props.me} onChange={(next) => setAt(i, next)} />
              <button type="button" onClick={() => setActions(actions.filter((_, j) => j !== i))} disabled={actions.length === 1}>
                {t('automationEditor.removeAction')}{' '}{i + 1}
              </button>
            </li>
          ))}
        </ol>
        <div className="inline">
          <select aria-label={t('automationEditor.actionToAdd')} value={addType} onChange={(e) => setAddType(e.target.value)}>
            {ACTION_TYPES.filter(([v]) => hasRow || !NEEDS_ROW.has(v)).map(([v, l]) => (
              <option key={v} value={v}>
                {t(l)}
              </option>
            ))}
          </select>
          <button type="button" onClick={() => setActions([...actions, newAction(addType, table, actions.length)])} disabled={actions.length >= 10}>
            {t('automationEditor.addAction')}
          </button>
        </div>
      </fieldset>
      <button type="submit" disabled={action.busy}>
        {editing ? t('automationEditor.saveAutomation') : t('automationEditor.createAutomation')}
      </button>
      {editing && (
        <button type="button" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
      )}
      <ErrorText error={action.error} />
    </form>
  );
}

/** A trigger condition or an action type as shown: its catalogue text, or the server's value when unknown. */
export function triggerText(condition: unknown): string {
  const key = TRIGGERS.find(([v]) => v === condition)?.[1];
  return key ? t(key) : String(condition);
}
export function actionTypeText(type: unknown): string {
  const key = ACTION_TYPES.find(([v]) => v === type)?.[1];
  return key ? t(key) : String(type);
}

/** One action's fields; cells are edited as one column + one value (templates like `{Name}` allowed). */
function ActionFields({ n, action, table, tables, me, onChange }: { n: number; action: Action; table: Table; tables: Table[]; me: string; onChange: (a: Action) => void }) {
  const label = actionTypeText(action.type);
  const text = (field: string, titleKey: MessageKey, multiline = false) => {
    const title = t(titleKey);
    const props = { 'aria-label': t('automationEditor.actionNField', { n, field: title }), placeholder: title, value: String(action[field] ?? ''), onChange: (e: { target: { value: string } }) => onChange({ ...action, [field]: e.target.value }) };
    return multiline ? <textarea rows={4} {...props} /> : <input {...props} />;
  };
  const cell = (field: 'updates' | 'row', target: Table) => {
    const entries = Object.entries((action[field] as Record<string, unknown> | undefined) ?? {});
    const [key, value] = entries[0] ?? [target.columns[0]?.key ?? '', ''];
    return (
      <>
        <select aria-label={t('automationEditor.actionNColumn', { n })} value={key} onChange={(e) => onChange({ ...action, [field]: { [e.target.value]: value } })}>
          {target.columns.map((c) => (
            <option key={c.key} value={c.key}>
              {c.name}
            </option>
          ))}
        </select>
        <input aria-label={t('automationEditor.actionNValue', { n })} placeholder={t('automationEditor.valueEGName')} value={String(value ?? '')} onChange={(e) => onChange({ ...action, [field]: { [key]: e.target.value } })} />
      </>
    );
  };
  let fields = null;
  switch (action.type) {
    case 'notify': {
      const users = (action.users as string[] | undefined) ?? [];
      fields = (
        <>
          <label className="check">
            <input type="checkbox" aria-label={t('automationEditor.actionNNotifyMe', { n })} checked={users.includes(me)} onChange={(e) => onChange({ ...action, users: e.target.checked ? [...users, me] : users.filter((u) => u !== me) })} />
            {t('common.me')}
          </label>
          <select aria-label={t('automationEditor.actionNUsersIn', { n })} value={String(action.users_column_key ?? '')} onChange={(e) => onChange({ ...action, users_column_key: e.target.value })}>
            <option value="">{t('common.andUsersInColumn')}</option>
            {table.columns.filter((c) => c.type === 'collaborator').map((c) => (
              <option key={c.key} value={c.key}>
                {c.name}
              </option>
            ))}
          </select>
          {text('default_msg', 'actionField.message')}
        </>
      );
      break;
    }
    case 'send_email':
      fields = (
        <>
          {text('send_to', 'actionField.to')}
          {text('subject', 'actionField.subject')}
          {text('default_msg', 'actionField.message')}
        </>
      );
      break;
    case 'update_record':
      fields = cell('updates', table);
      break;
    case 'add_record': {
      const target = tables.find((x) => x._id === action.table_id) ?? table;
      fields = (
        <>
          <select aria-label={t('automationEditor.actionNTable', { n })} value={target._id} onChange={(e) => onChange({ ...action, table_id: e.target.value, row: {} })}>
            {tables.map((x) => (
              <option key={x._id} value={x._id}>
                {x.name}
              </option>
            ))}
          </select>
          {cell('row', target)}
        </>
      );
      break;
    }
    case 'link_records':
      fields = <LinkRecordsFields n={n} action={action} table={table} tables={tables} onChange={onChange} />;
      break;
    case 'call_webhook':
      fields = (
        <>
          {text('url', 'actionField.url')}
          {text('body', 'actionField.body')}
        </>
      );
      break;
    case 'run_script':
      fields = text('script', 'actionField.script', true);
      break;
    default:
      fields = null;
  }
  return (
    <div className="inline">
      <strong>{label}</strong> {fields}
    </div>
  );
}
