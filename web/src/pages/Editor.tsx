import { useMemo } from 'react';
import { href } from '../router';
import { ErrorText, Loading } from '../ui';
import { useBaseAccess } from '../grid/base';
import { BaseEditor } from '../grid/BaseEditor';
import { useLiveBase } from '../grid/live-base';
import { t } from '../i18n';

/** The base editor for a signed-in user: their Base-Token, live updates, sharing and integrations. */
export function Editor({ workspaceId, baseName, tableId, rowId }: { workspaceId: string; baseName: string; tableId?: string; rowId?: string }) {
  const access = useBaseAccess(workspaceId, baseName);
  const live = useLiveBase(access.data, workspaceId, baseName);
  const workspace = useMemo(() => ({ workspaceId, baseName }), [workspaceId, baseName]);
  if (access.isLoading) return <Loading what={t('editor.opening')} />;
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
          <a href={href('base', workspaceId, baseName, 'share')}>{t('editor.share')}</a>
          <a href={href('base', workspaceId, baseName, 'integrations')}>{t('editor.integrations')}</a>
          <span className={`live live-${live}`} role="status" aria-label={t('live.label', { state: t(`live.${live}`) })} title={t(`live.${live}.title`)}>
            {t(`live.${live}`)}
          </span>
        </>
      }
    />
  );
}
