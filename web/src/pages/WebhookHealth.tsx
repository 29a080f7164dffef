import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';
import { Empty, ErrorText, Loading } from '../ui';

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
      <h2>Webhook health ({hooks.data?.count ?? '…'})</h2>
      {hooks.isLoading ? (
        <Loading />
      ) : hooks.error ? (
        <ErrorText error={hooks.error} />
      ) : hooks.data!.webhook_list.length === 0 ? (
        <Empty>No webhooks.</Empty>
      ) : (
        <table className="list" aria-label="Webhook health">
          <thead>
            <tr>
              <th>Base</th>
              <th>URL</th>
              <th>State</th>
              <th>Last delivery</th>
              <th>Failures in a row</th>
              <th>Failed</th>
              <th>Waiting</th>
            </tr>
          </thead>
          <tbody>
            {hooks.data!.webhook_list.map((w) => (
              <tr key={w.id} aria-label={`Webhook ${w.url}`}>
                <td>{w.dtable_name}</td>
                <td>
                  <code className="excerpt">{w.url}</code>
                </td>
                <td>
                  {w.is_valid ? <span className="tag good">enabled</span> : <span className="tag bad" title={w.invalid_reason ?? undefined}>disabled</span>}
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
                    <span className="muted">none yet</span>
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
        <div className="inline" aria-label="Webhook health pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span className="small muted">
            page {page} of {pages}
          </span>
          <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </div>
      )}
    </>
  );
}
