import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { href } from '../router';
import { ConfirmButton, CopyButton, Empty, ErrorText, Loading, PermissionSelect, useAction } from '../ui';
import { GroupShares, ViewShares } from './ShareGroups';
import { t } from '../i18n';

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
      <h1>{t('share.shareBasename', { baseName })}</h1>
      <form className="inline" onSubmit={add} aria-label={t('share.shareWithAUser')}>
        <input aria-label={t('share.userEMail')} placeholder={t('common.userExampleCom')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <PermissionSelect label={t('common.permission')} value={permission} onChange={setPermission} />
        <button type="submit" disabled={action.busy}>
          {t('editor.share')}
        </button>
      </form>
      <ErrorText error={action.error} />
      {shares.isLoading ? (
        <Loading />
      ) : shares.error ? (
        <ErrorText error={shares.error} />
      ) : shares.data?.length === 0 ? (
        <Empty>{t('share.notSharedWithAnyone')}</Empty>
      ) : (
        <table className="list" aria-label={t('share.sharedWith')}>
          <thead>
            <tr>
              <th>{t('share.user')}</th>
              <th>{t('common.permission')}</th>
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
                    label={t('share.permissionOfContactEmail', { contact_email: s.contact_email })}
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
                    label={t('share.unshare')}
                    question={t('share.stopSharingWithContact', { contact_email: s.contact_email })}
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
      <h2>{t('share.externalLinks')}</h2>
      <NewLink workspaceId={workspaceId} baseName={baseName} />
      {links.isLoading ? (
        <Loading />
      ) : links.error ? (
        <ErrorText error={links.error} />
      ) : links.data?.length === 0 ? (
        <Empty>{t('share.noExternalLinks')}</Empty>
      ) : (
        <ul className="plain">
          {links.data?.map((l) => (
            <li key={l.token}>
              <code>{l.url}</code> {l.password_protected && <span className="tag">{t('common.password')}</span>}{' '}
              {l.expire_date && <span className={l.is_expired ? 'tag bad' : 'tag'}>{l.is_expired ? t('share.expired') : t('share.expiresSlice', { slice: l.expire_date.slice(0, 10) })}</span>}{' '}
              <CopyButton text={l.url} label={t('share.copyLink')} />{' '}
              <ConfirmButton
                label={t('share.deleteLink')}
                question={t('share.deleteThisExternalLink')}
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
    <form className="inline" onSubmit={submit} aria-label={t('share.newExternalLink')}>
      <input aria-label={t('share.linkPasswordOptional')} placeholder={t('share.passwordOptional')} type="password" value={password} onChange={(e) => setPassword(e.target.value)} />
      <input aria-label={t('share.expiresInDaysOptional')} placeholder={t('share.expiresInDays')} type="number" min={1} value={days} onChange={(e) => setDays(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        {t('share.createLink')}
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}
