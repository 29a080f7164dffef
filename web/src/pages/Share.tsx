import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { href } from '../router';
import { ConfirmButton, CopyButton, Empty, ErrorText, Loading, PermissionSelect, useAction } from '../ui';
import { GroupShares, ViewShares } from './ShareGroups';

interface ShareEntry {
  email: string;
  name: string;
  contact_email: string;
  permission: string;
}
interface ExternalLink {
  url: string;
  token: string;
  is_expired: boolean;
  expire_date: string;
  password_protected: boolean;
  create_at: string;
}

/** Sharing a base with users and groups, sharing single views, and its external (read-only) links. */
export function Share({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const shares = useQuery(['shares', workspaceId, baseName], () =>
    api<{ user_list: ShareEntry[] }>(basePath(workspaceId, baseName, 'share/')).then((r) => r.user_list),
  );
  const links = useQuery(['links', workspaceId, baseName], () =>
    api<{ links: ExternalLink[] }>(basePath(workspaceId, baseName, 'external-links/')).then((r) => r.links),
  );
  const action = useAction();
  const refresh = () => client.invalidateQueries(['shares', workspaceId, baseName]);
  const [email, setEmail] = useState('');
  const [permission, setPermission] = useState('r');
  const add = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api(basePath(workspaceId, baseName, 'share/'), { method: 'POST', body: { email, permission } });
      setEmail('');
      await refresh();
    });
  };
  return (
    <section>
      <p>
        <a href={href('base', workspaceId, baseName)}>← {baseName}</a>
      </p>
      <h1>Share “{baseName}”</h1>
      <form className="inline" onSubmit={add} aria-label="Share with a user">
        <input aria-label="User e-mail" placeholder="user@example.com" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <PermissionSelect label="Permission" value={permission} onChange={setPermission} />
        <button type="submit" disabled={action.busy}>
          Share
        </button>
      </form>
      <ErrorText error={action.error} />
      {shares.isLoading ? (
        <Loading />
      ) : shares.error ? (
        <ErrorText error={shares.error} />
      ) : shares.data?.length === 0 ? (
        <Empty>Not shared with anyone.</Empty>
      ) : (
        <table className="list" aria-label="Shared with">
          <thead>
            <tr>
              <th>User</th>
              <th>Permission</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {shares.data?.map((s) => (
              <tr key={s.email}>
                <td>
                  {s.name} <span className="muted">{s.contact_email}</span>
                </td>
                <td>
                  <PermissionSelect
                    label={`Permission of ${s.contact_email}`}
                    value={s.permission}
                    onChange={(permission) =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, 'share/'), { method: 'PUT', body: { email: s.contact_email, permission } });
                        await refresh();
                      })
                    }
                  />
                </td>
                <td>
                  <ConfirmButton
                    label="Unshare"
                    question={`Stop sharing with ${s.contact_email}?`}
                    onConfirm={() =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, 'share/'), { method: 'DELETE', body: { email: s.contact_email } });
                        await refresh();
                      })
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <GroupShares workspaceId={workspaceId} baseName={baseName} />
      <ViewShares workspaceId={workspaceId} baseName={baseName} />
      <h2>External links</h2>
      <NewLink workspaceId={workspaceId} baseName={baseName} />
      {links.isLoading ? (
        <Loading />
      ) : links.error ? (
        <ErrorText error={links.error} />
      ) : links.data?.length === 0 ? (
        <Empty>No external links.</Empty>
      ) : (
        <ul className="plain">
          {links.data?.map((l) => (
            <li key={l.token}>
              <code>{l.url}</code> {l.password_protected && <span className="tag">password</span>}{' '}
              {l.expire_date && <span className={l.is_expired ? 'tag bad' : 'tag'}>{l.is_expired ? 'expired' : `expires ${l.expire_date.slice(0, 10)}`}</span>}{' '}
              <CopyButton text={l.url} label="Copy link" />{' '}
              <ConfirmButton
                label="Delete link"
                question="Delete this external link?"
                onConfirm={() =>
                  void action.run(async () => {
                    await api(basePath(workspaceId, baseName, `external-links/${encodeURIComponent(l.token)}/`), { method: 'DELETE' });
                    await client.invalidateQueries(['links', workspaceId, baseName]);
                  })
                }
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function NewLink({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const [password, setPassword] = useState('');
  const [days, setDays] = useState('');
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api(basePath(workspaceId, baseName, 'external-links/'), {
        method: 'POST',
        body: { ...(password ? { password } : {}), ...(days ? { expire_days: Number(days) } : {}) },
      });
      setPassword('');
      setDays('');
      await client.invalidateQueries(['links', workspaceId, baseName]);
    });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label="New external link">
      <input aria-label="Link password (optional)" placeholder="password (optional)" type="password" value={password} onChange={(e) => setPassword(e.target.value)} />
      <input aria-label="Expires in days (optional)" placeholder="expires in days" type="number" min={1} value={days} onChange={(e) => setDays(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        Create link
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
