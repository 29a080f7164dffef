import type { Db, DialectName, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import * as deliveries from './deliveries.repository.js';
import type { AttemptRecord, ClaimedDelivery } from './deliveries.repository.js';
import type { AttemptReport } from './delivery.service.js';
import type { Decision } from './retry-policy.js';

/** Most attempts written in one transaction. */
const MAX_BATCH = 500;
/**
 * Batches being written at once. More than one, so a batch waiting for the database (on SQLite,
 * behind the writes' transactions on the one connection) does not hold back the attempts that end
 * meanwhile, and the lanes they hold turn over; few, so attempts still gather into batches.
 */
const MAX_WRITING = 4;

export interface AttemptRecorderDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  /** The disable policy, run in the recording transaction for a delivery whose lease was still held. */
  applyPolicy(trx: Executor, delivery: ClaimedDelivery, decision: Decision, now: number): Promise<void>;
}

interface Entry {
  delivery: ClaimedDelivery;
  token: string;
  attempt: number;
  report: AttemptReport;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Records attempt outcomes in batches (issue 18): the attempts that end within one turn of the event
 * loop are written together in one transaction (one commit for many attempts instead of one each);
 * while MAX_WRITING batches are being written, further attempts gather for the next one.
 * `record()` resolves once the attempt is committed, so the deliverer's slot (and, through the lease,
 * the row's next delivery) is held until then.
 *
 * At-least-once: a delivery stays leased until its outcome is committed. A crash before that loses
 * only the buffer: the lease is freed at the next start (SQLite) or taken over (PostgreSQL) and the
 * delivery is sent again with the same `webhook-id`; the log shows every recorded attempt.
 */
export class AttemptRecorder {
  private queue: Entry[] = [];
  private writing = 0;
  private scheduled = false;

  constructor(private readonly deps: AttemptRecorderDeps) {}

  record(delivery: ClaimedDelivery, token: string, attempt: number, report: AttemptReport): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ delivery, token, attempt, report, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing >= MAX_WRITING) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.writeNext();
    });
  }

  private writeNext(): void {
    if (this.writing >= MAX_WRITING || this.queue.length === 0) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    this.writing++;
    void this.write(batch).finally(() => {
      this.writing--;
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async write(batch: Entry[]): Promise<void> {
    try {
      await this.writeBatch(batch);
      for (const entry of batch) entry.resolve();
      return;
    } catch {
      // One bad entry must not hold back the others: write each on its own.
    }
    for (const entry of batch) {
      try {
        await this.writeBatch([entry]);
        entry.resolve();
      } catch (error) {
        // Not recorded: the lease stays, so the delivery is sent again (at-least-once).
        entry.reject(error);
      }
    }
  }

  private async writeBatch(batch: Entry[]): Promise<void> {
    const { db, dialect } = this.deps;
    const now = this.deps.clock.now();
    const items = batch.map((entry) => ({ entry, ...stateOf(entry, now) }));
    const [only] = items;
    if (dialect === 'postgres' && items.length === 1 && !only!.policy) {
      // A lone attempt: one statement, no transaction.
      await deliveries.finishAttempt(db, dialect, only!.record, only!.attempt);
      return;
    }
    await db.transaction().execute(async (trx) => {
      const written = await deliveries.finishAttempts(trx, items);
      for (const item of items) {
        // A lost lease (deleted webhook, or another worker took over after expiry) writes nothing.
        if (item.policy && written.has(item.entry.delivery.id)) {
          await this.deps.applyPolicy(trx, item.entry.delivery, item.entry.report.decision, now);
        }
      }
    });
  }
}

/** The delivery's new state, its log row, and whether the disable policy must run. */
function stateOf(entry: Entry, now: number): { record: AttemptRecord; attempt: ReturnType<typeof attemptRow>; policy: boolean } {
  const { delivery, token, attempt, report } = entry;
  const { decision, result } = report;
  const done = decision.outcome !== 'retry';
  const record: AttemptRecord = {
    deliveryId: delivery.id,
    claimToken: token,
    attempt,
    status: decision.outcome === 'success' ? 'succeeded' : done ? 'failed' : 'pending',
    nextAttemptAt: decision.outcome === 'retry' ? decision.nextAttemptAt : now,
    completedAt: done ? now : null,
    statusCode: result.ok ? result.status : null,
    error: decision.outcome === 'success' ? null : decision.error,
  };
  const policy = decision.outcome === 'failed' || decision.outcome === 'gone' || (decision.outcome === 'success' && delivery.failure_streak !== 0);
  return { record, attempt: attemptRow(delivery.id, delivery.url, attempt, report), policy };
}

export function attemptRow(deliveryId: number, url: string, attempt: number, report: AttemptReport) {
  const { result, decision, startedAt } = report;
  return {
    delivery_id: deliveryId,
    attempt,
    started_at: startedAt,
    duration_ms: result.durationMs,
    url,
    status_code: result.ok ? result.status : null,
    error: decision.outcome === 'success' ? null : decision.error,
    response_excerpt: result.ok ? result.body : null,
    outcome: decision.outcome,
    next_attempt_at: decision.outcome === 'retry' ? decision.nextAttemptAt : null,
  };
}
