import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { ConfirmButton, Empty, ErrorText, Loading, clearIfSent, useAction } from '../ui';
import { RuleLine, type Rule } from './Rules';
import type { User } from '../types';
import { WebhookHealth } from './WebhookHealth';
import { t } from '../i18n';

/** System administration: users, rules, rate limits and the health of every webhook. */
export function Admin() {
  return (
    <section>
      <h1>{t('admin.administration')}</h1>
      <Users />
      <AdminRules />
      <RateLimits />
      <WebhookHealth />
    </section>
  );
}

function Users() {
  const client = useQueryClient();
  const users = useQuery(['admin-users'], () => api<{ data: User[]; total_count: number }>('/api/v2.1/admin/users/?page=1&per_page=100'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [staff, setStaff] = useState(false);
  const action = useAction();
  const create = (e: FormEvent) => {
    e.preventDefault();
    const sent = { email, password, name };
    void action.run(async () => {
      await api('/api/v2.1/admin/users/', { method: 'POST', body: { ...sent, is_staff: staff } });
      clearIfSent(setEmail, sent.email, '');
      clearIfSent(setPassword, sent.password, '');
      clearIfSent(setName, sent.name, '');
      await client.invalidateQueries(['admin-users']);
    });
  };
  const update = (u: User, body: { is_active?: boolean; is_staff?: boolean }) => {
    if (body.is_active === false && !window.confirm(t('admin.deactivateContactEmailThey', { contact_email: u.contact_email }))) return;
    void action.run(async () => {
      await api(`/api/v2.1/admin/users/${encodeURIComponent(u.contact_email)}/`, { method: 'PUT', body });
      await client.invalidateQueries(['admin-users']);
    });
  };
  return (
    <>
      <h2>{t('admin.users')}</h2>
      <form className="inline" onSubmit={create} aria-label={t('admin.newUser')}>
        <input aria-label={t('admin.newUserEMail')} type="email" placeholder={t('admin.eMail')} value={email} onChange={(e) => setEmail(e.target.value)} required />
        <input aria-label={t('admin.newUserName')} placeholder={t('admin.name')} value={name} onChange={(e) => setName(e.target.value)} />
        <input aria-label={t('admin.newUserPassword')} type="password" placeholder={t('common.password')} value={password} onChange={(e) => setPassword(e.target.value)} required />
        <label className="check">
          <input type="checkbox" checked={staff} onChange={(e) => setStaff(e.target.checked)} />{' '}{t('common.admin')}
        </label>
        <button type="submit" disabled={action.busy}>
          {t('admin.createUser')}
        </button>
      </form>
      <ErrorText error={action.error} />
      {users.isLoading ? (
        <Loading />
      ) : users.error ? (
        <ErrorText error={users.error} />
      ) : (
        <table className="list" aria-label={t('admin.users')}>
          <tbody>
            {users.data?.data.map((u) => (
              <tr key={u.email}>
                <td>{u.name}</td>
                <td>{u.contact_email}</td>
                <td>{u.is_staff ? t('common.admin') : t('admin.user')}</td>
                <td>{u.is_active ? t('common.active') : <span className="tag bad">{t('admin.deactivated')}</span>}</td>
                <td className="actions">
                  {/* The spoken name starts with the shown text (WCAG 2.5.3), then says whose row it is. */}
                  <button type="button" onClick={() => update(u, { is_active: !u.is_active })} aria-label={`${u.is_active ? t('admin.deactivate') : t('admin.activate')} ${u.contact_email}`}>
                    {u.is_active ? t('admin.deactivate') : t('admin.activate')}
                  </button>
                  <button type="button" onClick={() => update(u, { is_staff: !u.is_staff })} aria-label={`${u.is_staff ? t('admin.removeAdmin') : t('admin.makeAdmin')} ${u.contact_email}`}>
                    {u.is_staff ? t('admin.removeAdmin') : t('admin.makeAdmin')}
                  </button>
                  <ConfirmButton
                    label={t('common.delete')}
                    question={t('admin.deleteTheUserContact', { contact_email: u.contact_email })}
                    onConfirm={() =>
                      void action.run(async () => {
                        await api(`/api/v2.1/admin/users/${encodeURIComponent(u.contact_email)}/`, { method: 'DELETE' });
                        await client.invalidateQueries(['admin-users']);
                      })
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function AdminRules() {
  const client = useQueryClient();
  const all = useQuery(['admin-rules'], () => api<{ notification_rule_list: Rule[]; count: number }>('/api/v2.1/admin/notification-rules/?page=1&per_page=100'));
  const invalid = useQuery(['admin-invalid-rules'], () => api<{ invalid_notification_rule_list: Rule[]; count: number }>('/api/v2.1/admin/invalid-notification-rules/?page=1&per_page=100'));
  const action = useAction();
  const refresh = () => Promise.all([client.invalidateQueries(['admin-rules']), client.invalidateQueries(['admin-invalid-rules'])]);
  const remove = (r: Rule) =>
    action.run(async () => {
      await api(`/api/v2.1/admin/notification-rules/${r.id}/`, { method: 'DELETE' });
      await refresh();
    });
  const list = (rules: Rule[] | undefined, label: string) =>
    !rules || rules.length === 0 ? (
      <Empty>{t('admin.none')}</Empty>
    ) : (
      <ul className="plain" aria-label={label}>
        {rules.map((r) => (
          <li key={r.id}>
            <RuleLine rule={r} /> <span className="muted small">{t('admin.baseSliceByCreator', { slice: r.dtable_uuid.slice(0, 8), creator: r.creator })}</span>{' '}
            <ConfirmButton label={t('common.delete')} question={t('admin.deleteRuleId', { id: r.id })} onConfirm={() => void remove(r)} />
          </li>
        ))}
      </ul>
    );
  return (
    <>
      <h2>{t('admin.invalidRulesValue', { value: invalid.data?.count ?? '…' })}</h2>
      <ConfirmButton
        label={t('admin.deleteAllInvalidRules')}
        question={t('admin.deleteEveryInvalidRule')}
        disabled={!invalid.data?.count}
        onConfirm={() => void action.run(async () => { await api('/api/v2.1/admin/invalid-notification-rules/', { method: 'DELETE' }); await refresh(); })}
      />
      <ErrorText error={action.error ?? invalid.error} />
      {invalid.isLoading ? <Loading /> : list(invalid.data?.invalid_notification_rule_list, 'Invalid rules')}
      <h2>{t('admin.allRulesValue', { value: all.data?.count ?? '…' })}</h2>
      <ErrorText error={all.error} />
      {all.isLoading ? <Loading /> : list(all.data?.notification_rule_list, 'All rules')}
    </>
  );
}

interface LimitsSummary {
  store: string;
  account_per_minute: number;
  base_per_minute: number;
  base_overrides: Array<{ base_uuid: string; per_minute: number; updated_at: string }>;
}

function RateLimits() {
  const client = useQueryClient();
  const limits = useQuery(['admin-limits'], () => api<LimitsSummary>('/api/v2.1/admin/rate-limits/'));
  const [uuid, setUuid] = useState('');
  const [perMinute, setPerMinute] = useState('');
  const action = useAction();
  const refresh = () => client.invalidateQueries(['admin-limits']);
  const set = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api(`/api/v2.1/admin/rate-limits/bases/${encodeURIComponent(uuid)}/`, { method: 'PUT', body: { per_minute: Number(perMinute) } });
      await refresh();
    });
  };
  return (
    <>
      <h2>{t('admin.rateLimits')}</h2>
      {limits.isLoading ? (
        <Loading />
      ) : limits.error ? (
        <ErrorText error={limits.error} />
      ) : (
        <p className="muted">{t('admin.storeStoreAccountPer', { store: limits.data?.store, account_per_minute: limits.data?.account_per_minute, base_per_minute: limits.data?.base_per_minute })}</p>
      )}
      <form className="inline" onSubmit={set} aria-label={t('admin.baseRateLimitOverride')}>
        <input aria-label={t('admin.baseUuid')} placeholder={t('admin.baseUuid2')} value={uuid} onChange={(e) => setUuid(e.target.value)} required />
        <input aria-label={t('admin.requestsPerMinute')} type="number" min={1} placeholder={t('admin.perMinute')} value={perMinute} onChange={(e) => setPerMinute(e.target.value)} required />
        <button type="submit">{t('admin.setOverride')}</button>
      </form>
      <ErrorText error={action.error} />
      <ul className="plain">
        {limits.data?.base_overrides.map((o) => (
          <li key={o.base_uuid}>
            <code>{o.base_uuid}</code> {o.per_minute}{t('admin.min')}{' '}
            <ConfirmButton label={t('files.removeShort')} question={t('admin.removeThisOverride')} onConfirm={() => void action.run(async () => { await api(`/api/v2.1/admin/rate-limits/bases/${o.base_uuid}/`, { method: 'DELETE' }); await refresh(); })} />
          </li>
        ))}
      </ul>
    </>
  );
}
