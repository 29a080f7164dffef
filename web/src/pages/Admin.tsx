import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { ConfirmButton, Empty, ErrorText, Loading, useAction } from '../ui';
import { RuleLine, type Rule } from './Rules';
import type { User } from '../types';
import { WebhookHealth } from './WebhookHealth';

/** System administration: users, rules, rate limits and the health of every webhook. */
export function Admin() {
  return (
    <section>
      <h1>Administration</h1>
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
    void action.run(async () => {
      await api('/api/v2.1/admin/users/', { method: 'POST', body: { email, password, name, is_staff: staff } });
      setEmail('');
      setPassword('');
      setName('');
      await client.invalidateQueries(['admin-users']);
    });
  };
  const update = (u: User, body: { is_active?: boolean; is_staff?: boolean }) => {
    if (body.is_active === false && !window.confirm(`Deactivate ${u.contact_email}? They can no longer sign in.`)) return;
    void action.run(async () => {
      await api(`/api/v2.1/admin/users/${encodeURIComponent(u.contact_email)}/`, { method: 'PUT', body });
      await client.invalidateQueries(['admin-users']);
    });
  };
  return (
    <>
      <h2>Users</h2>
      <form className="inline" onSubmit={create} aria-label="New user">
        <input aria-label="New user e-mail" type="email" placeholder="e-mail" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <input aria-label="New user name" placeholder="name" value={name} onChange={(e) => setName(e.target.value)} />
        <input aria-label="New user password" type="password" placeholder="password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        <label className="check">
          <input type="checkbox" checked={staff} onChange={(e) => setStaff(e.target.checked)} /> admin
        </label>
        <button type="submit" disabled={action.busy}>
          Create user
        </button>
      </form>
      <ErrorText error={action.error} />
      {users.isLoading ? (
        <Loading />
      ) : users.error ? (
        <ErrorText error={users.error} />
      ) : (
        <table className="list" aria-label="Users">
          <tbody>
            {users.data?.data.map((u) => (
              <tr key={u.email}>
                <td>{u.name}</td>
                <td>{u.contact_email}</td>
                <td>{u.is_staff ? 'admin' : 'user'}</td>
                <td>{u.is_active ? 'active' : <span className="tag bad">deactivated</span>}</td>
                <td className="actions">
                  <button type="button" onClick={() => update(u, { is_active: !u.is_active })} aria-label={`${u.is_active ? 'Deactivate' : 'Activate'} ${u.contact_email}`}>
                    {u.is_active ? 'Deactivate' : 'Activate'}
                  </button>
                  <button type="button" onClick={() => update(u, { is_staff: !u.is_staff })} aria-label={`${u.is_staff ? 'Remove admin from' : 'Make admin'} ${u.contact_email}`}>
                    {u.is_staff ? 'Remove admin' : 'Make admin'}
                  </button>
                  <ConfirmButton
                    label="Delete"
                    question={`Delete the user ${u.contact_email} and their bases?`}
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
      <Empty>None.</Empty>
    ) : (
      <ul className="plain" aria-label={label}>
        {rules.map((r) => (
          <li key={r.id}>
            <RuleLine rule={r} /> <span className="muted small">base {r.dtable_uuid.slice(0, 8)} · by {r.creator}</span>{' '}
            <ConfirmButton label="Delete" question={`Delete rule ${r.id}?`} onConfirm={() => void remove(r)} />
          </li>
        ))}
      </ul>
    );
  return (
    <>
      <h2>Invalid rules ({invalid.data?.count ?? '…'})</h2>
      <ConfirmButton
        label="Delete all invalid rules"
        question="Delete every invalid rule?"
        disabled={!invalid.data?.count}
        onConfirm={() => void action.run(async () => { await api('/api/v2.1/admin/invalid-notification-rules/', { method: 'DELETE' }); await refresh(); })}
      />
      <ErrorText error={action.error ?? invalid.error} />
      {invalid.isLoading ? <Loading /> : list(invalid.data?.invalid_notification_rule_list, 'Invalid rules')}
      <h2>All rules ({all.data?.count ?? '…'})</h2>
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
      <h2>Rate limits</h2>
      {limits.isLoading ? (
        <Loading />
      ) : limits.error ? (
        <ErrorText error={limits.error} />
      ) : (
        <p className="muted">
          Store {limits.data?.store}; {limits.data?.account_per_minute}/min per account, {limits.data?.base_per_minute}/min per base by default.
        </p>
      )}
      <form className="inline" onSubmit={set} aria-label="Base rate-limit override">
        <input aria-label="Base UUID" placeholder="base uuid" value={uuid} onChange={(e) => setUuid(e.target.value)} required />
        <input aria-label="Requests per minute" type="number" min={1} placeholder="per minute" value={perMinute} onChange={(e) => setPerMinute(e.target.value)} required />
        <button type="submit">Set override</button>
      </form>
      <ErrorText error={action.error} />
      <ul className="plain">
        {limits.data?.base_overrides.map((o) => (
          <li key={o.base_uuid}>
            <code>{o.base_uuid}</code> {o.per_minute}/min{' '}
            <ConfirmButton label="Remove" question="Remove this override?" onConfirm={() => void action.run(async () => { await api(`/api/v2.1/admin/rate-limits/bases/${o.base_uuid}/`, { method: 'DELETE' }); await refresh(); })} />
          </li>
        ))}
      </ul>
    </>
  );
}
