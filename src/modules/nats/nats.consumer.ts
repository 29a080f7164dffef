import type { Executor } from '../../db/index.js';
import type { JetStreamPublisher } from '../../platform/nats.js';
import type { ChangeEvent, OutboxConsumer, OutboxConsumerOptions } from '../events/index.js';
import { changeMessage } from './nats.message.js';

/** Progress of the NATS stream in `event_consumers`: renaming it republishes every retained change. */
export const NATS_CONSUMER = 'nats-stream';

export interface NatsPublishCounters {
  published(count: number, duplicates: number): void;
  failed(): void;
}

/**
 * Publishes every committed change to JetStream, in id order, with `Nats-Msg-Id` = the change's id. An
 * `outside` consumer: the dispatcher runs it in a lane of its own, with no transaction held, and
 * advances its position only after every message of the batch was acknowledged by the stream; a batch
 * sent again (after a crash or a failed acknowledgement) is de-duplicated by the stream.
 */
export class NatsEventConsumer implements OutboxConsumer {
  readonly name = NATS_CONSUMER;
  readonly options: OutboxConsumerOptions = { outside: true, batchSize: 500 };

  constructor(
    private readonly publisher: JetStreamPublisher,
    private readonly subjectPrefix: string,
    private readonly counters?: NatsPublishCounters,
  ) {}

  async handle(_db: Executor, events: ChangeEvent[]): Promise<void> {
    // Room for the headers (Nats-Msg-Id) and the protocol line within the server's max_payload.
    const maxBytes = this.publisher.maxPayload - 4096;
    try {
      const { duplicates } = await this.publisher.publishAll(events.map((event) => changeMessage(this.subjectPrefix, event, maxBytes)));
      this.counters?.published(events.length - duplicates, duplicates);
    } catch (error) {
      this.counters?.failed();
      throw error;
    }
  }
}
