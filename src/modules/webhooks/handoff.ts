import type { Executor } from '../../db/index.js';
import type { BatchContext } from '../events/index.js';
import { queueWindows, type ClaimedDelivery, type QueueItem } from './claim.repository.js';
import type { NewDelivery } from './deliveries.repository.js';

/**
 * The in-process hand-off (issue 18): deliveries the dispatcher creates are created already leased to
 * this process's delivery worker when they may go at once, and passed to its pool in memory after the
 * dispatcher's transaction commits — no claim round trip. What may go at once is decided here, with
 * the same rules a claim applies; everything else is queued for the claim as before.
 */

/** The local delivery worker's side of a hand-off (the delivery service). */
export interface HandoffWorker {
  /**
   * The lease a hand-off sets now (the same columns and duration a claim sets), or null when this
   * process's worker cannot take deliveries: its loop is not running, its start-up recovery has not
   * run, or (PostgreSQL) its heartbeat is not fresh enough to keep the lease its own.
   */
  openLease(now: number): HandoffLease | null;
  /** Reserve up to `n` of the worker's free slots (WEBHOOK_CONCURRENCY); returns how many were granted. */
  reserve(n: number): number;
  /** After the commit: send these leased deliveries; `reserved` slots had been reserved for them. */
  accept(deliveries: ClaimedDelivery[], token: string, reserved: number): void;
  /** The transaction rolled back: give the reserved slots back. */
  release(reserved: number): void;
  /** Counts this worker's finished claims: a backlog seen before the last claim may be gone. */
  readonly claimEpoch: number;
}

/**
 * Webhooks last seen with a backlog, by the claim epoch of that moment. Only a claim takes a backlog
 * away (its deliveries are leased, then finished), so until this worker claims again a webhook
 * seen with a backlog still has one: its queue is not read again (no hand-off, the safe side). A
 * claim by another instance (PostgreSQL) is noticed at this worker's next claim, which the queued
 * deliveries' wake-up brings soon.
 */
export class BacklogHints {
  private readonly seen = new Map<number, number>();

  known(webhookId: number, epoch: number): boolean {
    const at = this.seen.get(webhookId);
    if (at === undefined) return false;
    if (at === epoch) return true;
    this.seen.delete(webhookId);
    return false;
  }

  note(webhookId: number, epoch: number): void {
    this.seen.set(webhookId, epoch);
  }
}

export interface HandoffLease {
  token: string;
  owner: string;
  leaseUntil: number;
  lanes: number;
}

/** The dispatcher's batch context (src/modules/outbox): the hand-off needs its rollback hook. */
export type HandoffContext = BatchContext;

/**
 * Which of the new deliveries (`rows`, in event order) may be handed off: indexes into `rows`, each
 * webhook's in order, interleaved one per webhook per turn (the claim's round-robin). A webhook gets
 * none when its queue has a delivery a claim could pick now (a backlog: it is served by the claim, in
 * order and fairly) or more pending deliveries than a bounded window shows; a delivery is skipped when
 * an earlier delivery of its webhook and row is unfinished (also one earlier in this batch), and with
 * `lanes` = 1 only a webhook's first delivery of an empty queue goes. At most `lanes` per webhook are
 * in flight, counting the leases already held.
 */
export async function handoffCandidates(
  trx: Executor,
  rows: NewDelivery[],
  lanes: number,
  now: number,
  hints?: { backlog: BacklogHints; epoch: number; pending?: Map<number, number> },
): Promise<number[]> {
  // One more than the lanes: a longer queue than that is a backlog or at its lane limit anyway.
  const size = lanes + 1;
  const byWebhook = new Map<number, number[]>();
  for (const [index, row] of rows.entries()) {
    const webhookId = Number(row.webhook_id);
    if (hints?.backlog.known(webhookId, hints.epoch)) continue;
    // The queue length is known already (the backlog cap counted it): a long queue is not read.
    if ((hints?.pending?.get(webhookId) ?? 0) >= size) continue;
    const list = byWebhook.get(Number(row.webhook_id));
    if (list) list.push(index);
    else byWebhook.set(Number(row.webhook_id), [index]);
  }
  if (byWebhook.size === 0) return [];
  const windows = await queueWindows(trx, [...byWebhook.keys()], size);
  const perWebhook: number[][] = [];
  for (const [webhookId, indexes] of byWebhook) {
    const queue = windows.get(webhookId) ?? [];
    const state = queueState(queue, size, lanes, now);
    if (state === null) {
      hints?.backlog.note(webhookId, hints.epoch);
      continue;
    }
    const chosen: number[] = [];
    const seen = new Set<string>();
    for (const index of indexes) {
      if (lanes === 1 && index !== indexes[0]) break;
      if (state.inFlight + chosen.length >= lanes) break;
      const rowKey = rows[index]!.row_key ?? null;
      const blocked = rowKey !== null && (state.busyRows.has(rowKey) || seen.has(rowKey));
      if (rowKey !== null) seen.add(rowKey);
      if (!blocked) chosen.push(index);
    }
    if (chosen.length > 0) perWebhook.push(chosen);
  }
  const out: number[] = [];
  for (let turn = 0; ; turn++) {
    let any = false;
    for (const list of perWebhook) {
      if (turn < list.length) {
        out.push(list[turn]!);
        any = true;
      }
    }
    if (!any) return out;
  }
}

/** A webhook's pending queue as the hand-off sees it; null when it gets no hand-off. */
function queueState(queue: QueueItem[], size: number, lanes: number, now: number): { inFlight: number; busyRows: Set<string> } | null {
  // A full window may hide more of the queue (an earlier delivery of a row, or a backlog): no hand-off.
  if (queue.length >= size) return null;
  if (lanes === 1 && queue.length > 0) return null;
  const leased = (d: QueueItem) => d.locked_until !== null && Number(d.locked_until) > now;
  const busyRows = new Set<string>();
  let inFlight = 0;
  for (const d of queue) {
    if (leased(d)) inFlight++;
    // Due, free, not behind an earlier delivery of its row: a claim would pick it — a backlog.
    else if (Number(d.next_attempt_at) <= now && (d.row_key === null || !busyRows.has(d.row_key))) return null;
    if (d.row_key !== null) busyRows.add(d.row_key);
  }
  return { inFlight, busyRows };
}
