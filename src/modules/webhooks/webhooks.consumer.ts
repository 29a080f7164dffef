import type { Executor } from '../../db/index.js';
import type { ChangeEvent, EventConsumer } from '../events/index.js';
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
    /** Wakes the delivery worker; it re-checks shortly after, once this transaction has committed. */
    private readonly onQueued: () => void = () => {},
  ) {}

  async handle(trx: Executor, events: ChangeEvent[]): Promise<void> {
    const baseIds = [...new Set(events.map((e) => e.baseId))];
    const hooks = await repo.validForBases(trx, baseIds);
    if (hooks.length === 0) return;
    const byBase = new Map<number, number[]>();
    for (const hook of hooks) byBase.set(Number(hook.base_id), [...(byBase.get(Number(hook.base_id)) ?? []), Number(hook.id)]);
    const now = this.now();
    const rows: NewDelivery[] = [];
    for (const event of events) {
      const targets = byBase.get(event.baseId);
      if (!targets) continue;
      const body = eventBody(event);
      for (const webhookId of targets) {
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
            },
            now,
          ),
        );
      }
    }
    await deliveries.insertDeliveries(trx, rows);
    if (rows.length > 0) this.onQueued();
  }
}
