import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { ConfirmButton, Empty, ErrorText, Loading, clearIfSent, useAction } from '../ui';
import { t } from '../i18n';

interface Webhook {
  id: number;
  url: string;
  created_at: string;
  is_valid: boolean;
  settings: { secret?: string };
  subscription?: Subscription;
  previous_secret_valid_until?: string;
  max_rate?: number;
}
interface Stats {
  deliveries_succeeded: number;
  deliveries_failed: number;
  success_rate: number | null;
  latency_ms: { p50: number | null; p99: number | null };
  backlog: number;
  backlog_capped: boolean;
}
/** Which changes a webhook receives (issue 31); absent: every change. */
interface Subscription {
  tables: string[] | null;
  columns: string[] | null;
  events: string[] | null;
  filters: unknown[] | null;
  filter_conjunction: string;
  fire_on: string;
}
const ROW_EVENTS = ['insert_row', 'modify_row', 'delete_row', 'add_link', 'remove_link'];
interface Attempt {
  attempt: number;
  time: string;
  status_code: number | null;
  latency_ms: number;
  outcome: string;
  error: string | null;
  response_excerpt: string | null;
}
interface Delivery {
  id: number;
  kind: string;
  op_type: string | null;
  status: string;
  attempt_count: number;
  created_at: string;
  redelivery_of: number | null;
  attempts: Attempt[];
}

export function Webhooks({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const key = ['webhooks', workspaceId, baseName];
  const hooks = useQuery(key, () => api<{ webhook_list: Webhook[] }>(basePath(workspaceId, baseName, 'webhooks/')).then((r) => r.webhook_list));
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [open, setOpen] = useState<number | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const action = useAction();
  const refresh = () => client.invalidateQueries(key);
  const create = (e: FormEvent) => {
    e.preventDefault();
    const sent = { url, secret };
    void action.run(async () => {
      await api(basePath(workspaceId, baseName, 'webhooks/'), { method: 'POST', body: { url: sent.url, ...(sent.secret ? { secret: sent.secret } : {}) } });
      clearIfSent(setUrl, sent.url, '');
      clearIfSent(setSecret, sent.secret, '');
      await refresh();
    });
  };
  const hookPath = (id: number, suffix = '') => basePath(workspaceId, baseName, `webhooks/${id}/${suffix}`);
  return (
    <>
      <h2>{t('webhooks.webhooks')}</h2>
      <form className="inline" onSubmit={create} aria-label={t('webhooks.newWebhook')}>
        <input aria-label={t('webhooks.webhookUrl')} placeholder={t('webhooks.httpsExampleComHook')} type="url" value={url} onChange={(e) => setUrl(e.target.value)} required />
        <input aria-label={t('webhooks.webhookSecretOptional')} placeholder={t('webhooks.secretOptional')} value={secret} onChange={(e) => setSecret(e.target.value)} />
        <button type="submit" disabled={action.busy}>
          {t('webhooks.addWebhook')}
        </button>
      </form>
      <ErrorText error={action.error} />
      {hooks.isLoading ? (
        <Loading />
      ) : hooks.error ? (
        <ErrorText error={hooks.error} />
      ) : hooks.data?.length === 0 ? (
        <Empty>{t('common.noWebhooks')}</Empty>
      ) : (
        <ul className="plain">
          {hooks.data?.map((h) => (
            <li key={h.id} className="card wide" aria-label={t('webhookHealth.webhookUrl', { url: h.url })}>
              <div>
                <code>{h.url}</code> {h.is_valid ? <span className="tag good">{t('common.active')}</span> : <span className="tag bad">{t('webhooks.disabledAfterFailures')}</span>}
                {h.settings.secret ? <span className="tag">{t('webhooks.signed')}</span> : null}
                {h.subscription ? <span className="tag">{t('webhooks.filtered')}</span> : null}
                {h.previous_secret_valid_until ? <span className="tag">{t('webhooks.oldSecretValidUntil', { slice: h.previous_secret_valid_until.replace('T', ' ').slice(0, 16) })}</span> : null}
                {h.max_rate ? <span className="tag">{t('webhooks.atMostMaxRate', { max_rate: h.max_rate })}</span> : null}
              </div>
              <div className="actions">
                <button type="button" aria-expanded={open === h.id} onClick={() => setOpen(open === h.id ? null : h.id)}>
                  {t('webhooks.deliveryLog')}
                </button>
                <button type="button" onClick={() => void action.run(async () => { await api(hookPath(h.id, 'ping/'), { method: 'POST' }); await client.invalidateQueries(['deliveries', h.id]); })}>
                  {t('webhooks.ping')}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    const next = window.prompt(t('webhooks.webhookUrl'), h.url);
                    if (next) void action.run(async () => { await api(hookPath(h.id), { method: 'PUT', body: { url: next } }); await refresh(); });
                  }}
                >
                  {t('webhooks.editUrl')}
                </button>
                <button type="button" aria-expanded={editing === h.id} onClick={() => setEditing(editing === h.id ? null : h.id)}>
                  {t('webhooks.subscription')}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    const next = window.prompt(t('webhooks.newSecretTheOld'));
                    if (next) void action.run(async () => { await api(hookPath(h.id, 'rotate-secret/'), { method: 'POST', body: { secret: next } }); await refresh(); });
                  }}
                >
                  {t('webhooks.rotateSecret')}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    const next = window.prompt(t('webhooks.maximumDeliveriesPerSecond'), h.max_rate ? String(h.max_rate) : '');
                    if (next !== null) void action.run(async () => { await api(hookPath(h.id), { method: 'PUT', body: { max_rate: next.trim() === '' ? null : next.trim() } }); await refresh(); });
                  }}
                >
                  {t('webhooks.maxRate')}
                </button>
                {!h.is_valid && (
                  <button type="button" onClick={() => void action.run(async () => { await api(hookPath(h.id), { method: 'PUT', body: {} }); await refresh(); })}>
                    {t('webhooks.reEnable')}
                  </button>
                )}
                <ConfirmButton label={t('common.delete')} question={t('webhooks.deleteTheWebhookTo', { url: h.url })} onConfirm={() => void action.run(async () => { await api(hookPath(h.id), { method: 'DELETE' }); await refresh(); })} />
              </div>
              {editing === h.id && (
                <SubscriptionForm
                  value={h.subscription}
                  onSave={(body) =>
                    void action.run(async () => {
                      await api(hookPath(h.id), { method: 'PUT', body });
                      setEditing(null);
                      await refresh();
                    })
                  }
                />
              )}
              {open === h.id && <DeliveryStats path={hookPath(h.id)} webhookId={h.id} />}
              {open === h.id && <DeliveryLog path={hookPath(h.id)} webhookId={h.id} />}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

const list = (text: string) => text.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** Edits tables, columns, events, row filters and fire_on; empty fields mean "every". */
function SubscriptionForm({ value, onSave }: { value: Subscription | undefined; onSave: (body: Record<string, unknown>) => void }) {
  const [tables, setTables] = useState((value?.tables ?? []).join(', '));
  const [columns, setColumns] = useState((value?.columns ?? []).join(', '));
  const [events, setEvents] = useState<string[]>(value?.events ?? []);
  const [filters, setFilters] = useState(value?.filters ? JSON.stringify(value.filters) : '');
  const [conjunction, setConjunction] = useState(value?.filter_conjunction ?? 'And');
  const [fireOn, setFireOn] = useState(value?.fire_on ?? 'matching');
  const [error, setError] = useState<string | null>(null);
  const save = (e: FormEvent) => {
    e.preventDefault();
    let parsed: unknown = null;
    try {
      parsed = filters.trim() === '' ? null : JSON.parse(filters);
    } catch {
      setError(t('webhooks.filtersMustBeJson'));
      return;
    }
    setError(null);
    onSave({ tables: list(tables), columns: list(columns), events, filters: parsed, filter_conjunction: conjunction, fire_on: fireOn });
  };
  return (
    <form className="stack" onSubmit={save} aria-label={t('webhooks.webhookSubscription')}>
      <input aria-label={t('editor.tables')} placeholder={t('webhooks.tablesNamesOrIds')} value={tables} onChange={(e) => setTables(e.target.value)} />
      <input aria-label={t('toolbar.columns')} placeholder={t('webhooks.columnsThatMustChange')} value={columns} onChange={(e) => setColumns(e.target.value)} />
      <fieldset className="inline">
        <legend>{t('webhooks.eventsNoneCheckedAll')}</legend>
        {ROW_EVENTS.map((op) => (
          <label key={op}>
            <input type="checkbox" checked={events.includes(op)} onChange={(e) => setEvents(e.target.checked ? [...events, op] : events.filter((x) => x !== op))} /> {op}
          </label>
        ))}
      </fieldset>
      <textarea aria-label={t('webhooks.rowFiltersJson')} placeholder={t('webhooks.columnNameScoreFilter')} value={filters} onChange={(e) => setFilters(e.target.value)} />
      <div className="inline">
        <select aria-label={t('webhooks.filterConjunction')} value={conjunction} onChange={(e) => setConjunction(e.target.value)}>
          <option value="And">{t('webhooks.allFilters')}</option>
          <option value="Or">{t('webhooks.anyFilter')}</option>
        </select>
        <select aria-label={t('webhooks.fireOn')} value={fireOn} onChange={(e) => setFireOn(e.target.value)}>
          <option value="matching">{t('webhooks.whileTheRowMatches')}</option>
          <option value="starts_matching">{t('webhooks.whenTheRowStarts')}</option>
        </select>
        <button type="submit">{t('webhooks.saveSubscription')}</button>
      </div>
      <ErrorText error={error} />
    </form>
  );
}

function DeliveryLog({ path, webhookId }: { path: string; webhookId: number }) {
  const client = useQueryClient();
  const key = ['deliveries', webhookId];
  const deliveries = useQuery(key, () => api<{ delivery_list: Delivery[]; total_count: number }>(`${path}deliveries/?page=1&per_page=25`), { refetchInterval: 3000 });
  const action = useAction();
  if (deliveries.isLoading) return <Loading what={t('webhooks.loadingDeliveries')} />;
  if (deliveries.error) return <ErrorText error={deliveries.error} />;
  const list = deliveries.data?.delivery_list ?? [];
  return (
    <div className="deliveries" aria-label={t('webhooks.deliveryLog')}>
      <CatchUp path={path} onQueued={() => client.invalidateQueries(key)} />
      <ErrorText error={action.error} />
      {list.length === 0 ? (
        <Empty>{t('webhooks.noDeliveriesYetChange')}</Empty>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th>#</th>
              <th>{t('webhooks.event')}</th>
              <th>{t('common.status')}</th>
              <th>{t('webhooks.attemptsTimeHttpStatus')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((d) => (
              <tr key={d.id}>
                <td>{d.id}</td>
                <td>
                  {d.kind}
                  {d.op_type ? ` · ${d.op_type}` : ''}
                  {d.redelivery_of ? t('webhooks.ofRedeliveryOf', { redelivery_of: d.redelivery_of }) : ''}
                </td>
                <td>
                  <span className={`tag ${d.status === 'succeeded' ? 'good' : d.status === 'failed' ? 'bad' : ''}`}>{d.status}</span>
                </td>
                <td>
                  {d.attempts.map((a) => (
                    <div key={a.attempt} className="small">
                      {a.time.replace('T', ' ').slice(0, 19)} · {a.status_code ?? a.error ?? a.outcome} · {t('webhooks.ms', { ms: a.latency_ms })}
                      {a.response_excerpt ? <code className="excerpt"> {a.response_excerpt.slice(0, 120)}</code> : null}
                    </div>
                  ))}
                </td>
                <td>
                  <button
                    type="button"
                    aria-label={t('webhooks.redeliverId', { id: d.id })}
                    onClick={() =>
                      void action.run(async () => {
                        await api(`${path}deliveries/${d.id}/redeliver/`, { method: 'POST' });
                        await client.invalidateQueries(key);
                      })
                    }
                  >
                    {t('webhooks.redeliver')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A `datetime-local` value (the browser's zone) as the ISO time with offset the API wants. */
const isoOf = (local: string) => new Date(local).toISOString();
const localNow = (offsetMs = 0) => {
  const d = new Date(Date.now() + offsetMs);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/**
 * Catching up after an outage (issue 31.4): redeliver every failed delivery since a time, or replay
 * the changes of a time range; both run behind live deliveries. Says how many were queued.
 */
function CatchUp({ path, onQueued }: { path: string; onQueued: () => Promise<unknown> }) {
  const [since, setSince] = useState(localNow(-86_400_000));
  const [from, setFrom] = useState(localNow(-86_400_000));
  const [to, setTo] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const queue = (what: string, suffix: string, body: Record<string, string>) =>
    void action.run(async () => {
      setDone(null);
      const { count } = await api<{ count: number }>(`${path}${suffix}`, { method: 'POST', body });
      setDone(`${what}: ${count} ${count === 1 ? 'delivery' : 'deliveries'} queued.`);
      await onQueued();
    });
  return (
    <div className="stack" aria-label={t('webhooks.catchUp')}>
      <form className="inline" aria-label={t('webhooks.redeliverFailed')} onSubmit={(e) => { e.preventDefault(); queue('Redeliver failed', 'redeliver/', { since: isoOf(since) }); }}>
        <label>
          {t('webhooks.failedSince')}{' '}<input type="datetime-local" aria-label={t('webhooks.failedSince')} value={since} onChange={(e) => setSince(e.target.value)} required />
        </label>
        <button type="submit" disabled={action.busy}>
          {t('webhooks.redeliverFailed')}
        </button>
      </form>
      <form className="inline" aria-label={t('webhooks.replayChanges')} onSubmit={(e) => { e.preventDefault(); queue('Replay', 'replay/', { from: isoOf(from), ...(to ? { to: isoOf(to) } : {}) }); }}>
        <label>
          {t('webhooks.changesFrom')}{' '}<input type="datetime-local" aria-label={t('webhooks.replayFrom')} value={from} onChange={(e) => setFrom(e.target.value)} required />
        </label>
        <label>
          {t('common.to')}{' '}<input type="datetime-local" aria-label={t('webhooks.replayToEmptyNow')} value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          {t('webhooks.replay')}
        </button>
      </form>
      {done ? (
        <p className="muted" role="status">
          {done}
        </p>
      ) : null}
      <ErrorText error={action.error} />
    </div>
  );
}

/** Success rate, latency and backlog of the last hour and day (GET …/stats/). */
function DeliveryStats({ path, webhookId }: { path: string; webhookId: number }) {
  const windows = ['hour', 'day'] as const;
  const stats = useQuery(['webhook-stats', webhookId], () => Promise.all(windows.map((w) => api<Stats>(`${path}stats/?window=${w}`))), { refetchInterval: 5000 });
  if (stats.isLoading) return <Loading what={t('webhooks.loadingStatistics')} />;
  if (stats.error) return <ErrorText error={stats.error} />;
  const ms = (v: number | null) => (v === null ? '–' : `${v} ms`);
  return (
    <table className="list" aria-label={t('webhooks.deliveryStatistics')}>
      <thead>
        <tr>
          <th>{t('webhooks.last')}</th>
          <th>{t('webhooks.successRate')}</th>
          <th>{t('webhooks.deliveredFailed')}</th>
          <th>{t('webhooks.latencyP50P99')}</th>
          <th>{t('webhooks.backlog')}</th>
        </tr>
      </thead>
      <tbody>
        {stats.data?.map((s, i) => (
          <tr key={windows[i]}>
            <td>{windows[i]}</td>
            <td>{s.success_rate === null ? '–' : `${(s.success_rate * 100).toFixed(1)} %`}</td>
            <td>
              {s.deliveries_succeeded} · {s.deliveries_failed}
            </td>
            <td>
              {ms(s.latency_ms.p50)} · {ms(s.latency_ms.p99)}
            </td>
            <td>
              {s.backlog}
              {s.backlog_capped ? '+' : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
