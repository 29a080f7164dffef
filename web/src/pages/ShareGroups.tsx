import { type FormEvent, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { ConfirmButton, Empty, ErrorText, Loading, PermissionSelect, clearIfSent, useAction } from '../ui';
import { useGroups } from './Groups';
import { t } from '../i18n';

interface GroupShare {
  group_id: number;
  group_name: string;
  permission: string;
}
interface ViewShare {
  id: number;
  to_user?: string;
  to_user_name?: string;
  to_group_id?: string;
  to_group_name?: string;
  permission: string;
  table_id: string;
  view_id: string;
}
interface TableInfo {
  _id: string;
  name: string;
  views: Array<{ _id: string; name: string }>;
}

/** Sharing a base with the caller's groups. */
export function GroupShares({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const groups = useGroups();
  const key = ['group-shares', workspaceId, baseName];
  const shares = useQuery(key, () => api<{ dtable_group_share_list: GroupShare[] }>(basePath(workspaceId, baseName, 'group-shares/')).then((r) => r.dtable_group_share_list));
  const action = useAction();
  const [groupId, setGroupId] = useState('');
  const [permission, setPermission] = useState('r');
  const refresh = () => client.invalidateQueries(key);
  const candidates = (groups.data ?? []).filter((g) => !shares.data?.some((s) => s.group_id === g.id));
  const add = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api(basePath(workspaceId, baseName, 'group-shares/'), { method: 'POST', body: { group_id: Number(groupId || candidates[0]?.id), permission } });
      setGroupId('');
      await refresh();
    });
  };
  return (
    <>
      <h2>{t('nav.groups')}</h2>
      {candidates.length > 0 && (
        <form className="inline" onSubmit={add} aria-label={t('shareGroups.shareWithAGroup')}>
          <select aria-label={t('toolbar.group')} value={groupId || String(candidates[0]?.id ?? '')} onChange={(e) => setGroupId(e.target.value)}>
            {candidates.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
          <PermissionSelect label={t('shareGroups.groupPermission')} value={permission} onChange={setPermission} />
          <button type="submit" disabled={action.busy}>
            {t('shareGroups.shareWithGroup')}
          </button>
        </form>
      )}
      <ErrorText error={action.error} />
      {shares.isLoading ? (
        <Loading />
      ) : shares.error ? (
        <ErrorText error={shares.error} />
      ) : shares.data?.length === 0 ? (
        <Empty>{t('shareGroups.notSharedWithAny')}</Empty>
      ) : (
        <table className="list" aria-label={t('shareGroups.sharedWithGroups')}>
          <tbody>
            {shares.data?.map((s) => (
              <tr key={s.group_id}>
                <td>{s.group_name}</td>
                <td>
                  <PermissionSelect
                    label={t('shareGroups.permissionOfGroupGroup', { group_name: s.group_name })}
                    value={s.permission}
                    onChange={(permission) =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, `group-shares/${s.group_id}/`), { method: 'PUT', body: { permission } });
                        await refresh();
                      })
                    }
                  />
                </td>
                <td>
                  <ConfirmButton
                    label={t('shareGroups.unshareGroup')}
                    question={t('shareGroups.stopSharingWithThe', { group_name: s.group_name })}
                    onConfirm={() =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, `group-shares/${s.group_id}/`), { method: 'DELETE' });
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
    </>
  );
}

/** Sharing one view (its rows, filtered, hidden columns hidden) with a user. */
export function ViewShares({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const key = ['view-shares', workspaceId, baseName];
  const tables = useQuery(['share-tables', workspaceId, baseName], async () => {
    const access = await api<{ access_token: string; dtable_uuid: string }>(basePath(workspaceId, baseName, 'access-token/'));
    const meta = await api<{ metadata: { tables: TableInfo[] } }>(`/api-gateway/api/v2/dtables/${access.dtable_uuid}/metadata/`, { token: access.access_token });
    return meta.metadata.tables;
  });
  const shares = useQuery(key, () => api<{ user_view_share_list: ViewShare[] }>(basePath(workspaceId, baseName, 'user-view-shares/')).then((r) => r.user_view_share_list));
  const action = useAction();
  const [view, setView] = useState('');
  const [email, setEmail] = useState('');
  const [permission, setPermission] = useState('r');
  const options = (tables.data ?? []).flatMap((t) => t.views.map((v) => ({ value: `${t._id}/${v._id}`, label: `${t.name} · ${v.name}` })));
  const label = (s: ViewShare) => options.find((o) => o.value === `${s.table_id}/${s.view_id}`)?.label ?? `${s.table_id} · ${s.view_id}`;
  const add = (e: FormEvent) => {
    e.preventDefault();
    const [tableId, viewId] = (view || options[0]?.value || '/').split('/');
    const sent = email;
    void action.run(async () => {
      await api(basePath(workspaceId, baseName, 'user-view-shares/'), { method: 'POST', body: { table_id: tableId, view_id: viewId, permission, to_user: sent } });
      clearIfSent(setEmail, sent, '');
      await client.invalidateQueries(key);
    });
  };
  return (
    <>
      <h2>{t('shareGroups.viewsSharedWithUsers')}</h2>
      <form className="inline" onSubmit={add} aria-label={t('shareGroups.shareAView')}>
        <select aria-label={t('toolbar.view')} value={view || options[0]?.value || ''} onChange={(e) => setView(e.target.value)}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <input aria-label={t('shareGroups.viewRecipientEMail')} placeholder={t('common.userExampleCom')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <select aria-label={t('shareGroups.viewPermission')} value={permission} onChange={(e) => setPermission(e.target.value)}>
          <option value="r">{t('common.readOnly')}</option>
          <option value="rw">{t('common.readWrite')}</option>
        </select>
        <button type="submit" disabled={action.busy || options.length === 0}>
          {t('shareGroups.shareView')}
        </button>
      </form>
      <ErrorText error={action.error ?? tables.error} />
      {shares.isLoading ? (
        <Loading />
      ) : shares.data?.length === 0 ? (
        <Empty>{t('shareGroups.noViewShared')}</Empty>
      ) : (
        <ul className="plain" aria-label={t('shareGroups.sharedViews')}>
          {shares.data?.map((s) => (
            <li key={s.id}>
              {label(s)} → {s.to_user_name} <span className="tag">{s.permission}</span>{' '}
              <ConfirmButton
                label={t('shareGroups.unshareView')}
                question={t('shareGroups.stopSharingThisView', { to_user_name: s.to_user_name })}
                onConfirm={() =>
                  void action.run(async () => {
                    await api(basePath(workspaceId, baseName, `user-view-shares/${s.id}/`), { method: 'DELETE' });
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
