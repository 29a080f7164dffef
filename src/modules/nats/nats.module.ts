import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventsNatsConfig } from '../../config/index.js';
import type { Db } from '../../db/index.js';
import { JetStreamPublisher } from '../../platform/nats.js';
import type { Clock } from '../../shared/clock.js';
import { consumerLag } from '../events/index.js';
import { NATS_CONSUMER, NatsEventConsumer, type NatsPublishCounters } from './nats.consumer.js';

export interface NatsStream {
  /** Register with the dispatcher (an `outside` consumer). */
  consumer: NatsEventConsumer;
  publisher: JetStreamPublisher;
  close(): Promise<void>;
}

export interface NatsStreamDeps {
  config: EventsNatsConfig;
  db: Db;
  clock: Clock;
  registry?: Registry;
}

/** The change stream to NATS JetStream (EVENTS_NATS_URL): publisher, outbox consumer and its metrics. */
export function createNatsStream(deps: NatsStreamDeps): NatsStream {
  const { config } = deps;
  const publisher = new JetStreamPublisher({
    url: config.url,
    stream: config.stream,
    subjects: [`${config.subjectPrefix}.>`],
    timeoutMs: config.timeoutMs,
  });
  const counters = deps.registry ? natsMetrics(deps, publisher) : undefined;
  return {
    consumer: new NatsEventConsumer(publisher, config.subjectPrefix, counters),
    publisher,
    close: () => publisher.close(),
  };
}

/**
 * `basegate_nats_lag_events` / `basegate_nats_lag_seconds` (read from the outbox at each scrape),
 * `basegate_nats_published_total{result}`, `basegate_nats_publish_failures_total`, `basegate_nats_connected`.
 */
function natsMetrics(deps: NatsStreamDeps, publisher: JetStreamPublisher): NatsPublishCounters {
  const registers = [deps.registry!];
  const lag = () => consumerLag(deps.db, NATS_CONSUMER);
  new Gauge({
    name: 'basegate_nats_lag_events',
    help: 'Committed changes not yet acknowledged by the NATS JetStream stream.',
    registers,
    async collect() {
      this.set((await lag()).events);
    },
  });
  new Gauge({
    name: 'basegate_nats_lag_seconds',
    help: 'Age of the oldest change not yet acknowledged by the NATS JetStream stream (0 when none is pending).',
    registers,
    async collect() {
      const { oldestCreatedAt } = await lag();
      this.set(oldestCreatedAt === null ? 0 : Math.max(0, deps.clock.now() - oldestCreatedAt) / 1000);
    },
  });
  new Gauge({
    name: 'basegate_nats_connected',
    help: 'Whether the NATS publisher holds a live connection (1) or not (0).',
    registers,
    collect() {
      this.set(publisher.connected ? 1 : 0);
    },
  });
  const published = new Counter({
    name: 'basegate_nats_published_total',
    help: 'Changes acknowledged by the NATS stream: stored, or duplicate (a repeat the stream dropped).',
    labelNames: ['result'],
    registers,
  });
  const failures = new Counter({ name: 'basegate_nats_publish_failures_total', help: 'Batches the NATS stream did not acknowledge (retried with backoff).', registers });
  return {
    published(count, duplicates) {
      published.inc({ result: 'stored' }, count);
      if (duplicates > 0) published.inc({ result: 'duplicate' }, duplicates);
    },
    failed: () => failures.inc(),
  };
}
