import { Counter, Histogram, type Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { Db, DialectName } from '../../db/index.js';
import { createOutboundHttp, type OutboundHttp } from '../../platform/http/index.js';
import type { Clock } from '../../shared/clock.js';
import { WebhookDeliverer } from '../../workers/webhook-deliverer.js';
import type { BaseAccess } from '../access/index.js';
import { WebhookDeliveryService, type WebhookNotifier } from './delivery.service.js';
import { SecretBox } from './secret-box.js';
import { WebhookEventConsumer } from './webhooks.consumer.js';
import { WebhooksService } from './webhooks.service.js';

export interface WebhooksModule {
  service: WebhooksService;
  delivery: WebhookDeliveryService;
  /** Register with the dispatcher: queues deliveries for committed change events. */
  consumer: WebhookEventConsumer;
  /** The delivery loop; started by the `worker` role, driven by `runOnce()` in tests. */
  deliverer: WebhookDeliverer;
  /** Delete finished deliveries older than WEBHOOK_RETENTION_DAYS; the scheduler runs it daily (`ticks`). */
  prune(): Promise<number>;
  ticks: WebhookTick[];
  close(): Promise<void>;
}

export interface WebhooksModuleDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  config: Config;
  access: BaseAccess;
  /** Override the outbound HTTP client (tests); by default undici with the SSRF guard. */
  http?: OutboundHttp;
  random?: () => number;
  /** Where the delivery metrics are registered (the container's Prometheus registry). */
  registry?: Registry;
  /** Tells owners in their inbox that a webhook was disabled (the notifications module's notifyUser). */
  notify?: WebhookNotifier;
}

/** A scheduled job for the scheduler (croner pattern with seconds). */
export interface WebhookTick {
  name: string;
  pattern: string;
  leaseMs: number;
  run(now: number): Promise<unknown>;
}

export function createWebhooksModule(deps: WebhooksModuleDeps): WebhooksModule {
  const { config } = deps;
  const http =
    deps.http ??
    createOutboundHttp({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
      connectionsPerOrigin: Math.max(4, config.webhookConcurrency, config.webhookLanes),
    });
  const secrets = new SecretBox(config.secretKey);
  const delivery = new WebhookDeliveryService({
    db: deps.db,
    dialect: deps.dialect,
    clock: deps.clock,
    http,
    secrets,
    retrySchedule: config.webhookRetrySchedule,
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
    lanes: config.webhookLanes,
    staleMs: config.webhookWorkerStaleMs,
    retentionDays: config.webhookRetentionDays,
    ...(deps.random ? { random: deps.random } : {}),
    onError: (error, context) => deliverer.log(error, context),
    onBlocked: (message) => deliverer.warnBlocked(message),
    ...(deps.registry ? { onAttempt: attemptMetrics(deps.registry) } : {}),
    ...(deps.notify ? { notify: deps.notify } : {}),
  });
  const deliverer = new WebhookDeliverer(delivery, deps.clock, { heartbeatMs: delivery.heartbeatMs });
  // In-process hand-off: while this process runs the delivery loop, the dispatcher's new deliveries
  // that may go at once are created leased to it and passed over in memory (no claim round trip).
  delivery.useHandoff(() => deliverer.running);
  const wake = () => deliverer.wake();
  const service = new WebhooksService({
    db: deps.db,
    clock: deps.clock,
    access: deps.access,
    secrets,
    delivery,
    onQueued: wake,
    maxPerBase: config.webhookMaxPerBase,
    allowPrivate: config.webhookAllowPrivate,
    timeZone: config.timeZone,
    replay: { max: config.webhookReplayMax, retentionDays: config.changeFeedRetentionDays, maxBacklog: config.webhookMaxBacklog },
  });
  const consumer = new WebhookEventConsumer(() => deps.clock.now(), wake, {
    max: config.webhookMaxBacklog,
    pause: (trx, webhookId, url, reason, now) => delivery.disableAndTell(trx, webhookId, url, reason, now),
  }, delivery);
  consumer.subscriptions.timeZone = config.timeZone;
  return {
    service,
    delivery,
    consumer,
    deliverer,
    prune: () => delivery.prune(),
    ticks: [{ name: 'webhook-log-prune', pattern: '0 23 3 * * *', leaseMs: 30 * 60_000, run: () => delivery.prune() }],
    async close() {
      await deliverer.stop();
      await http.close();
    },
  };
}

/** `basegate_webhook_attempts_total{outcome}` and the attempt latency histogram. */
function attemptMetrics(registry: Registry): (outcome: string, durationMs: number) => void {
  const attempts = new Counter({
    name: 'basegate_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (success, retry, failed, gone).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'basegate_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts.',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return (outcome, durationMs) => {
    attempts.inc({ outcome });
    latency.observe(durationMs / 1000);
  };
}
