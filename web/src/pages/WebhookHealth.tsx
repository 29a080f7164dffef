import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';
import { Empty, ErrorText, Loading } from '../ui';
import { t } from '../i18n';

interface WebhookHealthRecord {
  id: number;
  dtable_uuid: string;
  dtable_name: string;
  url: string;
  creator: string;
  is_valid: boolean;
  invalid_reason: string | null;
  failure_streak: number;
  failed_count: number;
  backlog: number;
  last_delivery: { status: string; last_status_code: number | null; last_error: string | null; completed_at: string } | null;
}

const HEALTH_PAGE = 25;

/** Every webhook of the system, disabled and failing ones first (GET /api/v2.1/admin/webhooks/). */
export function WebhookHealth() {
  const [page, setPage] = useState(1);
  const hooks = useQuery(['admin-webhooks', page], () => api<{ webhook_list: WebhookHealthRecord[]; count: number }>(`/api/v2.1/admin/webhooks/?page=${page}&per_page=${HEALTH_PAGE}`), {
    keepPreviousData: true,
  });
  const pages = Math.max(1, Math.ceil((hooks.data?.count ?? 0) / HEALTH_PAGE));
  return (
    <>
      <h2>{t('webhookHealth.webhookHealthValue', { value: hooks.data?.count ?? '…' })}</h2>
      {hooks.isLoading ? (
        <Loading />
      ) : hooks.error ? (
        <ErrorText error={hooks.error} />
      ) : hooks.data!.webhook_list.length === 0 ? (
        <Empty>{t('common.noWebhooks')}</Empty>
      ) : (
        <table className="list" aria-label={t('webhookHealth.webhookHealth')}>
          <thead>
            <tr>
              <th>{t('webhookHealth.base')}</th>
              <th>{t('common.url')}</th>
              <th>{t('webhookHealth.state')}</th>
              <th>{t('webhookHealth.lastDelivery')}</th>
              <th>{t('webhookHealth.failuresInARow')}</th>
              <th>{t('webhookHealth.failed')}</th>
              <th>{t('webhookHealth.waiting')}</th>
            </tr>
          </thead>
          <tbody>
            {hooks.data!.webhook_list.map((w) => (
              <tr key={w.id} aria-label={t('webhookHealth.webhookUrl', { url: w.url })}>
                <td>{w.dtable_name}</td>
                <td>
                  <code className="excerpt">{w.url}</code>
                </td>
                <td>
                  {w.is_valid ? <span className="tag good">{t('webhookHealth.enabled')}</span> : <span className="tag bad" title={w.invalid_reason ?? undefined}>{t('webhookHealth.disabled')}</span>}
                  {!w.is_valid && w.invalid_reason && <div className="small muted">{w.invalid_reason}</div>}
                </td>
                <td>
                  {w.last_delivery ? (
                    <>
                      <span className={`tag ${w.last_delivery.status === 'succeeded' ? 'good' : 'bad'}`}>{w.last_delivery.status}</span>{' '}
                      {w.last_delivery.last_status_code ?? w.last_delivery.last_error ?? ''}{' '}
                      <span className="small muted">{w.last_delivery.completed_at.replace('T', ' ').slice(0, 19)}</span>
                    </>
                  ) : (
                    <span className="muted">{t('webhookHealth.noneYet')}</span>
                  )}
                </td>
                <td>{w.failure_streak}</td>
                <td>{w.failed_count}</td>
                <td>{w.backlog}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages > 1 && (
        <div className="inline" aria-label={t('webhookHealth.webhookHealthPages')}>
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            {t('webhookHealth.previous')}
          </button>
          <span className="small muted">{t('webhookHealth.pagePageOfPages', { page, pages })}</span>
          <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            {t('webhookHealth.next')}
          </button>
        </div>
      )}
    </>
  );
}
