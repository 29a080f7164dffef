import type { Executor } from '../../db/index.js';
import type { ChangeEvent, ConsumerContext, EventConsumer } from '../events/index.js';
import * as deliveries from './deliveries.repository.js';
import type { NewDelivery } from './deliveries.repository.js';
import { eventBody, newMessageId } from './payload.js';
import * as repo from './webhooks.repository.js';

export const WEBHOOKS_CONSUMER = 'webhooks';

/**
 * Turns committed change events into queued deliveries: one per event per valid webhook of the
 * event's base, written in the dispatcher's transaction (so an event is queued exactly when the
 * consumer acknowledges it). `dedupe_key` makes a replayed event a no-op.
 */
export class WebhookEventConsumer implements EventConsumer {
  readonly name = WEBHOOKS_CONSUMER;

  constructor(
    private readonly now: () => number,
    /** Wakes the delivery worker; called once the dispatcher's transaction has committed. */
    private readonly onQueued: () => void = () => {},
  ) {}

  basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    return repo.basesWithWebhooks(trx, baseIds);
  }

  async handle(trx: Executor, events: ChangeEvent[], context?: ConsumerContext): Promise<void> {
    const baseIds = [...new Set(events.map((e) => e.baseId))];
    const hooks = await repo.validForBases(trx, baseIds);
    if (hooks.length === 0) return;
    const byBase = new Map<number, Array<{ id: number; start: number }>>();
    for (const hook of hooks) byBase.set(hook.base_id, [...(byBase.get(hook.base_id) ?? []), { id: hook.id, start: hook.start_event_id }]);
    const now = this.now();
    const rows: NewDelivery[] = [];
    for (const event of events) {
      const targets = byBase.get(event.baseId);
      if (!targets) continue;
      let body: string | null = null;
      for (const { id: webhookId, start } of targets) {
        // A webhook receives exactly the changes committed after it was created.
        if (event.id <= start) continue;
        body ??= eventBody(event);
        rows.push(
          deliveries.queuedDelivery(
            {
              webhook_id: webhookId,
              base_id: event.baseId,
              event_id: event.id,
              dedupe_key: `${webhookId}:${event.id}`,
              msg_id: newMessageId(),
              kind: 'event',
              op_type: event.opType,
              body,
              redelivery_of: null,
              row_key: event.rowId,
            },
            now,
          ),
        );
      }
    }
    await deliveries.insertDeliveries(trx, rows);
    if (rows.length === 0) return;
    // Waking before the commit would let the worker's claim (another connection) find nothing.
    if (context) context.afterCommit(this.onQueued);
    else this.onQueued();
  }
}
