import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { href } from '../router';
import { ConfirmButton, Empty, ErrorText, Loading, useAction } from '../ui';
import { useWorkspaces } from './Bases';
import { useLiveInbox } from '../live-inbox';
import { t } from '../i18n';

interface Notice {
  id: number;
  type: string;
  msg_type: string;
  dtable_uuid: string;
  detail: Record<string, unknown>;
  time: string;
  seen: boolean;
}
interface NoticeList {
  notification_list: Notice[];
  count: number;
  unseen_count: number;
}

/** Polling: every 5 s without the real-time channel, a slow safety net with it. */
const POLL_MS = 5000;
const LIVE_POLL_MS = 60_000;

/** The bell's observer polls; the inbox page shares its data (the bell is on every page). */
function useNotices(pollMs?: number) {
  return useQuery(['notices'], () => api<NoticeList>('/api/v2.1/notifications/?page=1&per_page=50'), { refetchInterval: pollMs ?? false });
}

export function Bell() {
  const live = useLiveInbox();
  const notices = useNotices(live ? LIVE_POLL_MS : POLL_MS);
  const unseen = notices.data?.unseen_count ?? 0;
  return (
    <a className="bell" href={href('inbox')} aria-label={t('inbox.bell', { count: unseen })} data-live={live ? 'yes' : 'no'}>
      <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" fill="currentColor"><path d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1z"/></svg>{unseen > 0 && <span className="badge" data-testid="unread-count">{unseen}</span>}
    </a>
  );
}

export function Inbox() {
  const client = useQueryClient();
  const notices = useNotices();
  const workspaces = useWorkspaces();
  const action = useAction();
  const refresh = () => client.invalidateQueries(['notices']);
  const bases = (workspaces.data ?? []).flatMap((w) => [...(w.table_list ?? []), ...(w.shared_table_list ?? [])]);
  if (notices.isLoading) return <Loading what={t('inbox.loading')} />;
  if (notices.error) return <ErrorText error={notices.error} />;
  const list = notices.data?.notification_list ?? [];
  return (
    <section className="inbox">
      <h1>{t('inbox.title')}</h1>
      <div className="inline">
        <button type="button" onClick={() => void action.run(async () => { await api('/api/v2.1/notifications/', { method: 'PUT', body: {} }); await refresh(); })}>
          {t('inbox.markAllRead')}
        </button>
        <ConfirmButton label={t('inbox.clearAll')} question={t('inbox.clearAllQuestion')} onConfirm={() => void action.run(async () => { await api('/api/v2.1/notifications/', { method: 'DELETE' }); await refresh(); })} />
      </div>
      <ErrorText error={action.error} />
      {list.length === 0 ? (
        <Empty>{t('inbox.none')}</Empty>
      ) : (
        <ul className="plain notices">
          {list.map((n) => {
            const base = bases.find((b) => b.uuid === n.dtable_uuid);
            const tableId = typeof n.detail.table_id === 'string' ? n.detail.table_id : undefined;
            const text = String(n.detail.msg ?? n.detail.default_msg ?? n.detail.rule_name ?? n.msg_type);
            return (
              <li key={n.id} className={n.seen ? 'seen' : 'unseen'}>
                <span className="small muted">{n.time.replace('T', ' ').slice(0, 16)}</span> <span>{text}</span>{' '}
                {base && (
                  <a href={noticeHref(base.workspace_id, base.name, tableId, rowOf(n.detail))}>
                    {base.name}
                    {rowOf(n.detail) ? t('inbox.row') : ''}
                  </a>
                )}{' '}
                {!n.seen && (
                  <button type="button" onClick={() => void action.run(async () => { await api('/api/v2.1/notification/', { method: 'PUT', body: { notice_id: n.id } }); await refresh(); })}>
                    {t('inbox.markRead')}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** To the row when the notification names one (the editor selects it and opens its comments). */
function noticeHref(workspaceId: number, baseName: string, tableId?: string, rowId?: string): string {
  if (tableId && rowId) return href('base', workspaceId, baseName, 'table', tableId, 'row', rowId);
  if (tableId) return href('base', workspaceId, baseName, 'table', tableId);
  return href('base', workspaceId, baseName);
}

/** The row a notification is about: `row_id` (comments, collaborators) or a one-row `row_id_list` (rules). */
function rowOf(detail: Record<string, unknown>): string | undefined {
  if (typeof detail.row_id === 'string') return detail.row_id;
  const list = detail.row_id_list;
  return Array.isArray(list) && list.length === 1 && typeof list[0] === 'string' ? list[0] : undefined;
}
