import { useMemo } from 'react';
import { href } from '../router';
import { ErrorText, Loading } from '../ui';
import { useBaseAccess } from '../grid/base';
import { BaseEditor } from '../grid/BaseEditor';
import { useLiveBase } from '../grid/live-base';

const LIVE_TEXT = { connecting: 'connecting…', live: 'live', offline: 'offline' } as const;
const LIVE_TITLE = {
  connecting: 'Connecting to the real-time channel',
  live: 'Changes by others appear as they happen',
  offline: 'Not connected: changes by others show after a refresh',
} as const;

/** The base editor for a signed-in user: their Base-Token, live updates, sharing and integrations. */
export function Editor({ workspaceId, baseName, tableId, rowId }: { workspaceId: string; baseName: string; tableId?: string; rowId?: string }) {
  const access = useBaseAccess(workspaceId, baseName);
  const live = useLiveBase(access.data, workspaceId, baseName);
  const workspace = useMemo(() => ({ workspaceId, baseName }), [workspaceId, baseName]);
  if (access.isLoading) return <Loading what="Opening base" />;
  if (access.error) return <ErrorText error={access.error} />;
  return (
    <BaseEditor
      access={access.data!}
      title={baseName}
      tableId={tableId}
      rowId={rowId}
      tableHref={(id) => href('base', workspaceId, baseName, 'table', id)}
      workspace={workspace}
      head={
        <>
          <a href={href('base', workspaceId, baseName, 'share')}>Share</a>
          <a href={href('base', workspaceId, baseName, 'integrations')}>Integrations</a>
          <span className={`live live-${live}`} role="status" aria-label={`Live updates: ${LIVE_TEXT[live]}`} title={LIVE_TITLE[live]}>
            {LIVE_TEXT[live]}
          </span>
        </>
      }
    />
  );
}
