import { type FormEvent, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc } from '../api';
import { href } from '../router';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, InlineForm, Loading, useAction } from '../ui';
import type { Workspace } from '../types';
import { t } from '../i18n';

export interface Group {
  id: number;
  name: string;
  owner: string;
  admins: string[];
  member_count: number;
}

interface Member {
  name: string;
  email: string;
  contact_email: string;
  is_admin: boolean;
  role: 'Owner' | 'Admin' | 'Member';
}

export function useGroups() {
  return useQuery(['groups'], () => api<Group[]>('/api/v2.1/groups/'));
}

/** The user's groups: create one, open one. */
export function Groups() {
  const groups = useGroups();
  const client = useQueryClient();
  return (
    <section>
      <h1>{t('nav.groups')}</h1>
      <InlineForm
        label={t('groups.newGroupName')}
        button={t('groups.createGroup')}
        onSubmit={async (name) => {
          await api('/api/v2.1/groups/', { method: 'POST', body: { name } });
          await client.invalidateQueries(['groups']);
          await client.invalidateQueries(['workspaces']);
        }}
      />
      {groups.isLoading ? (
        <Loading what={t('groups.loadingGroups')} />
      ) : groups.error ? (
        <ErrorText error={groups.error} />
      ) : groups.data?.length === 0 ? (
        <Empty>{t('groups.youAreInNo')}</Empty>
      ) : (
        <ul className="cards">
          {groups.data?.map((g) => (
            <li key={g.id} className="card" aria-label={t('groups.groupName', { name: g.name })}>
              <a className="card-title" href={href('groups', g.id)}>
                {g.name}
              </a>
              <span className="muted small">
                {t(g.member_count === 1 ? 'groups.memberCount' : 'groups.memberCountPlural', { count: g.member_count })}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One group: its members and their roles, its bases; what the caller may change depends on their role. */
export function GroupPage({ groupId }: { groupId: string }) {
  const { user } = useSession();
  const client = useQueryClient();
  const action = useAction();
  const group = useQuery(['group', groupId], () => api<Group>(`/api/v2.1/groups/${enc(groupId)}/`));
  const members = useQuery(['group-members', groupId], () => api<Member[]>(`/api/v2.1/groups/${enc(groupId)}/members/`));
  const workspaces = useQuery(['workspaces'], () => api<{ workspace_list: Array<Workspace & { group_id?: number }> }>('/api/v2.1/workspaces/').then((r) => r.workspace_list));
  const [email, setEmail] = useState('');
  if (group.isLoading || members.isLoading) return <Loading what={t('groups.loadingTheGroup')} />;
  if (group.error) return <ErrorText error={group.error} />;
  if (members.error) return <ErrorText error={members.error} />;
  const g = group.data!;
  const me = user?.email ?? '';
  const isOwner = g.owner === me;
  const isAdmin = isOwner || g.admins.includes(me);
  const workspace = workspaces.data?.find((w) => w.group_id === g.id);
  const refresh = async () => {
    await client.invalidateQueries(['group', groupId]);
    await client.invalidateQueries(['group-members', groupId]);
    await client.invalidateQueries(['groups']);
    await client.invalidateQueries(['workspaces']);
  };
  const memberPath = (m: Member) => `/api/v2.1/groups/${enc(groupId)}/members/${enc(m.email)}/`;
  const add = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api(`/api/v2.1/groups/${enc(groupId)}/members/`, { method: 'POST', body: { email } });
      setEmail('');
      await refresh();
    });
  };
  return (
    <section>
      <p>
        <a href={href('groups')}>{t('groups.groups')}</a>
      </p>
      <h1>{t('groups.groupName2', { name: g.name })}</h1>
      {isAdmin && (
        <InlineForm
          label={t('groups.groupName3')}
          button={t('groups.renameGroup')}
          initial={g.name}
          onSubmit={async (name) => {
            await api(`/api/v2.1/groups/${enc(groupId)}/`, { method: 'PUT', body: { name } });
            await refresh();
          }}
        />
      )}
      <h2>{t('groups.members')}</h2>
      {isAdmin && (
        <form className="inline" onSubmit={add} aria-label={t('groups.addAMember')}>
          <input aria-label={t('groups.memberEMail')} placeholder={t('common.userExampleCom')} type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          <button type="submit" disabled={action.busy}>
            {t('groups.addMember')}
          </button>
        </form>
      )}
      <ErrorText error={action.error} />
      <table className="list" aria-label={t('groups.members')}>
        <thead>
          <tr>
            <th>{t('groups.member2')}</th>
            <th>{t('groups.role')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {members.data?.map((m) => (
            <tr key={m.email}>
              <td>
                {m.name} <span className="muted">{m.contact_email}</span>
              </td>
              <td>
                {isOwner && m.role !== 'Owner' ? (
                  <select
                    aria-label={t('groups.roleOfContactEmail', { contact_email: m.contact_email })}
                    value={m.is_admin ? 'admin' : 'member'}
                    onChange={(e) =>
                      void action.run(async () => {
                        await api(memberPath(m), { method: 'PUT', body: { is_admin: e.target.value === 'admin' } });
                        await refresh();
                      })
                    }
                  >
                    <option value="member">{t('groups.member2')}</option>
                    <option value="admin">{t('nav.admin')}</option>
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>
                {m.role !== 'Owner' && (m.email === me || (isAdmin && (!m.is_admin || isOwner))) && (
                  <ConfirmButton
                    label={m.email === me ? t('groups.leave') : t('files.removeShort')}
                    question={m.email === me ? t('groups.leaveTheGroupName', { name: g.name }) : t('groups.removeContactEmailFrom', { contact_email: m.contact_email })}
                    onConfirm={() =>
                      void action.run(async () => {
                        await api(memberPath(m), { method: 'DELETE' });
                        if (m.email === me) window.location.hash = href('groups');
                        else await refresh();
                      })
                    }
                  />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>{t('nav.bases')}</h2>
      {workspace && (
        <InlineForm
          label={t('common.newBaseName')}
          button={t('groups.createBaseInGroup')}
          onSubmit={async (name) => {
            await api('/api/v2.1/dtables/', { method: 'POST', body: { name, workspace_id: workspace.id } });
            await refresh();
          }}
        />
      )}
      {(workspace?.table_list ?? []).length === 0 ? (
        <Empty>{t('groups.noBasesInThis')}</Empty>
      ) : (
        <ul className="plain" aria-label={t('groups.groupBases')}>
          {workspace?.table_list?.map((b) => (
            <li key={b.uuid}>
              <a href={href('base', b.workspace_id, b.name)}>{b.name}</a>
              {isAdmin && (
                <>
                  {' '}
                  <a href={href('base', b.workspace_id, b.name, 'share')}>{t('editor.share')}</a>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {isOwner && (
        <>
          <h2>{t('common.delete')}</h2>
          <ConfirmButton
            label={t('groups.deleteGroup')}
            question={t('groups.deleteTheGroupName', { name: g.name })}
            onConfirm={() =>
              void action.run(async () => {
                await api(`/api/v2.1/groups/${enc(groupId)}/`, { method: 'DELETE' });
                await client.invalidateQueries(['groups']);
                await client.invalidateQueries(['workspaces']);
                window.location.hash = href('groups');
              })
            }
          />
        </>
      )}
    </section>
  );
}
