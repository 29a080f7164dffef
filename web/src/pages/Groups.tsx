import { type FormEvent, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc } from '../api';
import { href } from '../router';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, InlineForm, Loading, useAction } from '../ui';
import type { Workspace } from '../types';

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
      <h1>Groups</h1>
      <InlineForm
        label="New group name"
        button="Create group"
        onSubmit={async (name) => {
          await api('/api/v2.1/groups/', { method: 'POST', body: { name } });
          await client.invalidateQueries(['groups']);
          await client.invalidateQueries(['workspaces']);
        }}
      />
      {groups.isLoading ? (
        <Loading what="Loading groups" />
      ) : groups.error ? (
        <ErrorText error={groups.error} />
      ) : groups.data?.length === 0 ? (
        <Empty>You are in no group yet — create one above.</Empty>
      ) : (
        <ul className="cards">
          {groups.data?.map((g) => (
            <li key={g.id} className="card" aria-label={`Group ${g.name}`}>
              <a className="card-title" href={href('groups', g.id)}>
                {g.name}
              </a>
              <span className="muted small">
                {g.member_count} member{g.member_count === 1 ? '' : 's'}
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
  if (group.isLoading || members.isLoading) return <Loading what="Loading the group" />;
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
        <a href={href('groups')}>← Groups</a>
      </p>
      <h1>Group “{g.name}”</h1>
      {isAdmin && (
        <InlineForm
          label="Group name"
          button="Rename group"
          initial={g.name}
          onSubmit={async (name) => {
            await api(`/api/v2.1/groups/${enc(groupId)}/`, { method: 'PUT', body: { name } });
            await refresh();
          }}
        />
      )}
      <h2>Members</h2>
      {isAdmin && (
        <form className="inline" onSubmit={add} aria-label="Add a member">
          <input aria-label="Member e-mail" placeholder="user@example.com" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          <button type="submit" disabled={action.busy}>
            Add member
          </button>
        </form>
      )}
      <ErrorText error={action.error} />
      <table className="list" aria-label="Members">
        <thead>
          <tr>
            <th>Member</th>
            <th>Role</th>
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
                    aria-label={`Role of ${m.contact_email}`}
                    value={m.is_admin ? 'admin' : 'member'}
                    onChange={(e) =>
                      void action.run(async () => {
                        await api(memberPath(m), { method: 'PUT', body: { is_admin: e.target.value === 'admin' } });
                        await refresh();
                      })
                    }
                  >
                    <option value="member">Member</option>
                    <option value="admin">Admin</option>
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>
                {m.role !== 'Owner' && (m.email === me || (isAdmin && (!m.is_admin || isOwner))) && (
                  <ConfirmButton
                    label={m.email === me ? 'Leave' : 'Remove'}
                    question={m.email === me ? `Leave the group “${g.name}”?` : `Remove ${m.contact_email} from the group? They lose access to its bases at once.`}
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
      <h2>Bases</h2>
      {workspace && (
        <InlineForm
          label="New base name"
          button="Create base in group"
          onSubmit={async (name) => {
            await api('/api/v2.1/dtables/', { method: 'POST', body: { name, workspace_id: workspace.id } });
            await refresh();
          }}
        />
      )}
      {(workspace?.table_list ?? []).length === 0 ? (
        <Empty>No bases in this group yet.</Empty>
      ) : (
        <ul className="plain" aria-label="Group bases">
          {workspace?.table_list?.map((b) => (
            <li key={b.uuid}>
              <a href={href('base', b.workspace_id, b.name)}>{b.name}</a>
              {isAdmin && (
                <>
                  {' '}
                  <a href={href('base', b.workspace_id, b.name, 'share')}>Share</a>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {isOwner && (
        <>
          <h2>Delete</h2>
          <ConfirmButton
            label="Delete group"
            question={`Delete the group “${g.name}”? A group that holds bases cannot be deleted.`}
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
