import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, Loading, useAction } from '../ui';
import { useBaseAccess, useMetadata } from '../grid/base';
import { actionTypeText, AutomationEditor, triggerText, type Automation } from './AutomationEditor';
import { t } from '../i18n';

interface Run {
  id: number;
  trigger: string;
  row_ids: string[];
  depth: number;
  status: string;
  actions: Array<{ _id: string; type: string; status: string; detail?: string; error?: string; output?: string }>;
  error: string;
  attempts: number;
  created_at: string;
  duration_ms: number;
}

/** Automation rules of a base: the rule editor, the list (invalid ones flagged) and each rule's run log. */
export function Automations({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const { user } = useSession();
  const key = ['automations', workspaceId, baseName];
  const rules = useQuery(key, () => api<{ dtable_automation_rule_list: Automation[] }>(basePath(workspaceId, baseName, 'automation-rules/')).then((r) => r.dtable_automation_rule_list));
  const access = useBaseAccess(workspaceId, baseName);
  const metadata = useMetadata(access.data);
  const [editing, setEditing] = useState<Automation | null>(null);
  const [logOf, setLogOf] = useState<number | null>(null);
  const action = useAction();
  const tables = metadata.data?.tables ?? [];
  const refresh = () => client.invalidateQueries(key);
  return (
    <>
      <h2>{t('automations.automations')}</h2>
      {metadata.isLoading || access.isLoading ? (
        <Loading what={t('common.loadingTables')} />
      ) : tables.length === 0 ? (
        <ErrorText error={access.error ?? metadata.error} />
      ) : (
        <AutomationEditor
          key={editing?.id ?? 'new'}
          workspaceId={workspaceId}
          baseName={baseName}
          tables={tables}
          me={user?.email ?? ''}
          editing={editing}
          onSaved={async () => {
            setEditing(null);
            await refresh();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorText error={action.error} />
      {rules.isLoading ? (
        <Loading />
      ) : rules.error ? (
        <ErrorText error={rules.error} />
      ) : rules.data?.length === 0 ? (
        <Empty>{t('automations.noAutomations')}</Empty>
      ) : (
        <ul className="plain" aria-label={t('automations.automations')}>
          {rules.data?.map((r) => (
            <li key={r.id}>
              <strong>{String(r.trigger.rule_name ?? `Automation ${r.id}`)}</strong>{' '}
              <span className="muted">{t('automations.valueRunConditionJoin', { value: triggerText(r.trigger.condition), run_condition: r.run_condition, join: r.actions.map((a) => actionTypeText(a.type)).join(', '), trigger_count: r.trigger_count })}</span>{' '}
              {!r.is_valid && <span className="tag bad">{t('automations.invalidValue', { value: r.invalid_reason ?? 'its table, view or column no longer exists' })}</span>}{' '}
              <button type="button" onClick={() => setEditing(r)}>
                {t('rowForm.editShort')}
              </button>{' '}
              <button type="button" aria-expanded={logOf === r.id} onClick={() => setLogOf(logOf === r.id ? null : r.id)}>
                {t('automations.runLog')}
              </button>{' '}
              <ConfirmButton
                label={t('common.delete')}
                question={t('automations.deleteTheAutomationString', { name: String(r.trigger.rule_name ?? r.id) })}
                onConfirm={() =>
                  void action.run(async () => {
                    await api(basePath(workspaceId, baseName, `automation-rules/${r.id}/`), { method: 'DELETE' });
                    if (editing?.id === r.id) setEditing(null);
                    await refresh();
                  })
                }
              />
              {logOf === r.id && <RunLog workspaceId={workspaceId} baseName={baseName} rule={r} />}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function RunLog({ workspaceId, baseName, rule }: { workspaceId: string; baseName: string; rule: Automation }) {
  const runs = useQuery(['automation-runs', rule.id], () => api<{ run_list: Run[]; count: number }>(basePath(workspaceId, baseName, `automation-rules/${rule.id}/runs/?per_page=25`)), { refetchInterval: 5000 });
  if (runs.isLoading) return <Loading what={t('automations.loadingRuns')} />;
  if (runs.error) return <ErrorText error={runs.error} />;
  const list = runs.data?.run_list ?? [];
  if (list.length === 0) return <Empty>{t('automations.noRunsYet')}</Empty>;
  return (
    <table aria-label={t('automations.runsOfString', { name: String(rule.trigger.rule_name ?? rule.id) })}>
      <thead>
        <tr>
          <th>{t('automations.when')}</th>
          <th>{t('common.trigger')}</th>
          <th>{t('automations.rows')}</th>
          <th>{t('common.status')}</th>
          <th>{t('common.actions')}</th>
          <th>{t('common.duration')}</th>
        </tr>
      </thead>
      <tbody>
        {list.map((run) => (
          <tr key={run.id}>
            <td>{run.created_at}</td>
            <td>{run.trigger}</td>
            <td>{run.row_ids.join(', ')}</td>
            <td>
              <span className={run.status === 'done' ? 'tag' : 'tag bad'}>{run.status}</span> {run.error}
            </td>
            <td>
              {run.actions.map((a) => (
                <div key={a._id}>
                  {a.type}: {a.status}
                  {a.detail ? ` — ${a.detail}` : ''}
                  {a.error ? ` — ${a.error}` : ''}
                  {a.output ? <pre>{a.output}</pre> : null}
                </div>
              ))}
            </td>
            <td>{t('automations.durationMsMs', { duration_ms: run.duration_ms })}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
