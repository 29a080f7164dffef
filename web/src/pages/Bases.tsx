import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { href } from '../router';
import { ConfirmButton, Empty, ErrorText, InlineForm, Loading, useAction } from '../ui';
import type { Base, Workspace } from '../types';
import { t } from '../i18n';

export function useWorkspaces() {
  return useQuery(['workspaces'], () => api<{ workspace_list: Workspace[] }>('/api/v2.1/workspaces/').then((r) => r.workspace_list));
}

/** Workspaces with their bases: create, rename, delete, and the way into editor, sharing and integrations. */
export function Bases() {
  const workspaces = useWorkspaces();
  const client = useQueryClient();
  const refresh = () => client.invalidateQueries(['workspaces']);
  if (workspaces.isLoading) return <Loading what={t('bases.loadingBases')} />;
  if (workspaces.error) return <ErrorText error={workspaces.error} />;
  const own = workspaces.data?.find((w) => w.type === 'personal') ?? workspaces.data?.[0];
  const shared = workspaces.data?.flatMap((w) => w.shared_table_list ?? []) ?? [];
  return (
    <section>
      <h1>{t('nav.bases')}</h1>
      <InlineForm
        label={t('common.newBaseName')}
        button={t('bases.createBase')}
        onSubmit={async (name) => {
          await api('/api/v2.1/dtables/', { method: 'POST', body: { name, ...(own ? { workspace_id: own.id } : {}) } });
          await refresh();
        }}
      />
      {/* The "shared" entry only carries the bases shared with the user: they are listed below. */}
      {workspaces.data?.filter((w) => w.type !== 'shared').map((w) => (
        <div key={String(w.id)} className="workspace">
          <h2>{workspaceTitle(w)}</h2>
          {(w.table_list ?? []).length === 0 ? (
            <Empty>{t('bases.noBasesYetCreate')}</Empty>
          ) : (
            <ul className="cards">
              {(w.table_list ?? []).map((b) => (
                <BaseCard key={b.uuid} base={b} onChanged={refresh} owned workspaces={workspaces.data ?? []} />
              ))}
            </ul>
          )}
        </div>
      ))}
      <h2>{t('bases.sharedWithMe')}</h2>
      {shared.length === 0 ? (
        <Empty>{t('bases.nothingSharedWithYou')}</Empty>
      ) : (
        <ul className="cards">
          {shared.map((b) => (
            <BaseCard key={b.uuid} base={b} onChanged={refresh} owned={false} workspaces={workspaces.data ?? []} />
          ))}
        </ul>
      )}
    </section>
  );
}

function BaseCard({ base, onChanged, owned, workspaces }: { base: Base; onChanged: () => unknown; owned: boolean; workspaces: Workspace[] }) {
  const [renaming, setRenaming] = useState(false);
  const [copying, setCopying] = useState(false);
  const action = useAction();
  const canAdmin = owned || base.permission === 'admin';
  return (
    <li className="card" aria-label={t('bases.baseName', { name: base.name })}>
      <a className="card-title" href={href('base', base.workspace_id, base.name)}>
        {base.name}
      </a>
      <span className="muted small">
        {owned ? t('bases.updatedReplace', { time: base.updated_at.slice(0, 16).replace('T', ' ') }) : t('bases.permissionFromFromUser', { permission: base.permission, from_user_name: base.from_user_name })}
      </span>
      <div className="actions">
        <a href={href('base', base.workspace_id, base.name)}>{t('link.open')}</a>
        {canAdmin && <a href={href('base', base.workspace_id, base.name, 'share')}>{t('editor.share')}</a>}
        {canAdmin && <a href={href('base', base.workspace_id, base.name, 'integrations')}>{t('editor.integrations')}</a>}
        {owned && (
          <button type="button" onClick={() => setRenaming(!renaming)}>
            {t('common.rename')}
          </button>
        )}
        <button type="button" aria-pressed={copying} onClick={() => setCopying(!copying)}>
          {t('common.copy')}
        </button>
        {owned && (
          <ConfirmButton
            label={t('common.delete')}
            question={t('bases.deleteTheBaseName', { name: base.name })}
            onConfirm={() =>
              void action.run(async () => {
                await api(`/api/v2.1/workspace/${base.workspace_id}/dtable/`, { method: 'DELETE', body: { name: base.name } });
                await onChanged();
              })
            }
          />
        )}
      </div>
      {renaming && (
        <InlineForm
          label={t('bases.newName')}
          button={t('bases.saveName')}
          initial={base.name}
          onSubmit={async (newName) => {
            await api(`/api/v2.1/workspace/${base.workspace_id}/dtable/`, { method: 'PUT', body: { name: base.name, new_name: newName } });
            setRenaming(false);
            await onChanged();
          }}
        />
      )}
      {copying && <CopyForm base={base} workspaces={workspaces} onCopied={async () => { setCopying(false); await onChanged(); }} />}
      <ErrorText error={action.error} />
    </li>
  );
}

/**
 * A copy keeps the base's name (the API's `dtable-copy`), so it goes to another workspace the user
 * owns: typically a base shared with them copied into their own.
 */
function CopyForm({ base, workspaces, onCopied }: { base: Base; workspaces: Workspace[]; onCopied: () => Promise<unknown> }) {
  const targets = workspaces.filter((w) => w.type === 'personal' || w.type === 'group');
  const [target, setTarget] = useState(String(targets.find((w) => String(w.id) !== String(base.workspace_id))?.id ?? targets[0]?.id ?? ''));
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api('/api/v2.1/dtable-copy/', { method: 'POST', body: { src_workspace_id: base.workspace_id, dst_workspace_id: Number(target), name: base.name } });
      await onCopied();
    });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label={t('bases.copyName', { name: base.name })}>
      <label>
        {t('bases.copyTo')}{' '}
        <select aria-label={t('bases.copyToWorkspace')} value={target} onChange={(e) => setTarget(e.target.value)}>
          {targets.map((w) => (
            <option key={String(w.id)} value={String(w.id)}>
              {workspaceTitle(w)}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={action.busy || !target}>
        {t('bases.copyBase')}
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}

/** A group's workspace by its group's name; the user's own (the server names it "personal") as "My bases". */
function workspaceTitle(w: Workspace): string {
  return w.type === 'group' ? t('bases.groupName', { name: w.name }) : t('bases.myBases');
}
