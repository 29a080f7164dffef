import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';

/** Finished deliveries read per statistics request (the latest of the window). */
export const STATS_SAMPLE = 10_000;
/** Pending deliveries counted at most (a longer backlog shows as this, capped). */
export const BACKLOG_COUNT_CAP = 100_000;

export interface DeliveryStats {
  succeeded: number;
  failed: number;
  /** The final attempt's response time of each finished delivery, sorted. */
  latencies: number[];
  sampled: boolean;
  backlog: number;
  backlogCapped: boolean;
}

/**
 * One webhook's delivery statistics since `since` from the delivery log, with bounded reads: the
 * latest STATS_SAMPLE finished deliveries (index on webhook_id, completed_at) and their final attempt,
 * and the pending count up to BACKLOG_COUNT_CAP.
 */
export async function deliveryStats(db: Executor, webhookId: number, since: number): Promise<DeliveryStats> {
  const finished = await sql<{ status: string; duration_ms: number | null }>`
    SELECT d.status, a.duration_ms
      FROM (SELECT id, status, attempts FROM webhook_deliveries
             WHERE webhook_id = ${webhookId} AND completed_at >= ${since}
             ORDER BY completed_at DESC LIMIT ${STATS_SAMPLE}) AS d
      LEFT JOIN webhook_attempts AS a ON a.delivery_id = d.id AND a.attempt = d.attempts`.execute(db);
  const pending = await sql<{ n: number }>`
    SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM webhook_deliveries
                                WHERE webhook_id = ${webhookId} AND status = 'pending' LIMIT ${BACKLOG_COUNT_CAP + 1}) AS q`.execute(db);
  let succeeded = 0;
  let failed = 0;
  const latencies: number[] = [];
  for (const row of finished.rows) {
    if (row.status === 'succeeded') succeeded++;
    else failed++;
    if (row.duration_ms !== null) latencies.push(Number(row.duration_ms));
  }
  latencies.sort((a, b) => a - b);
  const backlog = Number(pending.rows[0]?.n ?? 0);
  return {
    succeeded,
    failed,
    latencies,
    sampled: finished.rows.length >= STATS_SAMPLE,
    backlog: Math.min(backlog, BACKLOG_COUNT_CAP),
    backlogCapped: backlog > BACKLOG_COUNT_CAP,
  };
}

/** The nearest-rank percentile of sorted values; null when there are none. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
