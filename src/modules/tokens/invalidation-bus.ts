import { randomUUID } from 'node:crypto';
import { createRedis, type Redis } from '../../platform/redis.js';

/** Sent to handlers when messages may have been missed (a (re)connect): drop every cached entry. */
export const EVERYTHING = '*';

/**
 * Tells the other instances that a cached fact changed (a credential revoked, a base deleted).
 * Each instance updates its own caches directly; the bus only carries the news to the others.
 */
export interface InvalidationBus {
  publish(topic: string): Promise<void>;
  /** `handler` receives other instances' topics, and `EVERYTHING` after a (re)connect. */
  subscribe(handler: (topic: string) => void): void;
  /** Resolves once messages from other instances can arrive. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** One process (SQLite, or PostgreSQL without REDIS_URL): nobody else to tell. */
export class LocalBus implements InvalidationBus {
  async publish(): Promise<void> {}
  subscribe(): void {}
  async ready(): Promise<void> {}
  async close(): Promise<void> {}
}

/**
 * Redis pub/sub across instances. Publishing never fails a request: when Redis is away the
 * message is dropped and the other instances fall back on their caches' short TTL; when the
 * subscriber reconnects it tells its handlers to drop everything, because it may have missed news.
 */
export class RedisBus implements InvalidationBus {
  private readonly origin = randomUUID();
  private readonly handlers: Array<(topic: string) => void> = [];
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<void>;

  constructor(url: string, private readonly channel = 'basegate:tokens:invalidate') {
    this.publisher = createRedis(url, { name: 'tokens-publish' });
    this.subscriber = createRedis(url, { name: 'tokens-subscribe', commandTimeoutMs: 2000 });
    let markReady: () => void;
    this.subscribed = new Promise((resolve) => (markReady = resolve));
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel).then(
        () => {
          this.emit(EVERYTHING);
          markReady();
        },
        () => undefined, // retried on the next 'ready'
      );
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const space = message.indexOf(' ');
      if (space < 0 || message.slice(0, space) === this.origin) return;
      this.emit(message.slice(space + 1));
    });
  }

  async publish(topic: string): Promise<void> {
    await this.publisher.publish(this.channel, `${this.origin} ${topic}`).catch(() => undefined);
  }

  subscribe(handler: (topic: string) => void): void {
    this.handlers.push(handler);
  }

  ready(): Promise<void> {
    return this.subscribed;
  }

  async close(): Promise<void> {
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }

  private emit(topic: string): void {
    for (const handler of this.handlers) handler(topic);
  }
}
