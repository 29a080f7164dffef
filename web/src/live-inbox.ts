import { useEffect, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath } from './api';
import { openLive, type LiveStatus } from './live';
import type { BaseAccess } from './grid/base';
import { useWorkspaces } from './pages/Bases';

/**
 * Live notifications for the bell. The server sends `new-notification` to a user's sockets that
 * joined some base with the user's own Base-Token, so the bell joins the first base the user can
 * open. Without any base it stays offline and the bell keeps polling.
 */
export function useLiveInbox(): boolean {
  const client = useQueryClient();
  const workspaces = useWorkspaces();
  const base = (workspaces.data ?? []).flatMap((w) => [...(w.table_list ?? []), ...(w.shared_table_list ?? [])])[0];
  const path = base ? basePath(base.workspace_id, base.name, 'access-token/') : '';
  const access = useQuery(['access', String(base?.workspace_id), base?.name], () => api<BaseAccess>(path), {
    enabled: base !== undefined,
    staleTime: 60 * 60 * 1000,
  });
  const [status, setStatus] = useState<LiveStatus>('offline');
  useEffect(() => {
    if (!access.data) return undefined;
    const refresh = () => void client.invalidateQueries(['notices']);
    const close = openLive(access.data, { onStatus: setStatus, onNotification: refresh, onResync: refresh }, () => api<BaseAccess>(path));
    return () => {
      close();
      setStatus('offline');
    };
  }, [client, access.data, path]);
  return status === 'live';
}
