import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

/** One message for JetStream: its subject, body and the id the stream de-duplicates it by (`Nats-Msg-Id`). */
export interface StreamMessage {
  subject: string;
  data: string;
  id: string;
}

export interface JetStreamPublisherOptions {
  /** `nats://host:port` (several, comma-separated, for a cluster). */
  url: string;
  /** The stream, created if missing with `subjects`. */
  stream: string;
  subjects: string[];
  /** One publish acknowledgement (and the first connect) must arrive within this. */
  timeoutMs: number;
  /** Connection name shown by the server's monitoring. */
  name?: string;
}

export interface PublishResult {
  /** Messages the stream already had (same id within its duplicate window): dropped by the stream. */
  duplicates: number;
}

/**
 * A JetStream publisher for the outbox's broker lane. Connects on first use (a NATS that is down at
 * start is not fatal: the publish fails and the lane retries later) and creates the stream if it is
 * missing. The client reconnects by itself; while it cannot, publishes fail after `timeoutMs`.
 */
export class JetStreamPublisher {
  private ready: Promise<{ nc: NatsConnection; js: JetStreamClient }> | null = null;
  private connection: NatsConnection | null = null;
  private reconnecting = false;
  /** After a failed publish: check the stream again first (a NATS restarted without its store lost it). */
  private recheck = false;
  private closed = false;

  constructor(private readonly options: JetStreamPublisherOptions) {}

  /** Whether the client holds a live connection to a server now. */
  get connected(): boolean {
    return this.connection !== null && !this.connection.isClosed() && this.connection.info !== undefined && !this.reconnecting;
  }

  /** The server's largest message, in bytes (1 MiB until connected). */
  get maxPayload(): number {
    return this.connection?.info?.max_payload ?? 1024 * 1024;
  }

  /**
   * Publish every message, in order (pipelined), and wait for each acknowledgement. Rejects if any was
   * not acknowledged; the ones that were are stored, and publishing them again is de-duplicated.
   */
  async publishAll(messages: StreamMessage[]): Promise<PublishResult> {
    const { nc, js } = await this.connect();
    if (this.recheck) {
      await this.ensureStream(nc);
      this.recheck = false;
    }
    const timeout = this.options.timeoutMs;
    const acks = await Promise.allSettled(messages.map((m) => js.publish(m.subject, m.data, { msgID: m.id, timeout })));
    let duplicates = 0;
    for (const ack of acks) {
      if (ack.status === 'rejected') {
        this.recheck = true;
        throw ack.reason;
      }
      if (ack.value.duplicate) duplicates++;
    }
    return { duplicates };
  }

  async close(): Promise<void> {
    this.closed = true;
    const ready = this.ready;
    this.ready = null;
    if (ready) await ready.then(({ nc }) => nc.close()).catch(() => undefined);
  }

  private connect(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    if (this.closed) return Promise.reject(new Error('the NATS publisher is closed'));
    if (this.ready) return this.ready;
    const ready = this.open();
    this.ready = ready;
    // A failed connect (NATS down) is tried afresh next time; a connection that closes for good likewise.
    ready.catch(() => {
      if (this.ready === ready) this.ready = null;
    });
    return ready;
  }

  private async open(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    const { url, timeoutMs, name } = this.options;
    const nc = await connect({
      servers: url.split(',').map((s) => s.trim()),
      name: name ?? 'basegate',
      timeout: timeoutMs,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    try {
      await this.ensureStream(nc);
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
    this.connection = nc;
    void this.watch(nc);
    return { nc, js: jetstream(nc, { timeout: timeoutMs }) };
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') this.reconnecting = true;
      if (status.type === 'reconnect') this.reconnecting = false;
    }
    // The status iterator ends when the connection closed for good: connect anew next time.
    this.connection = null;
    if (this.ready && (await this.ready.then((r) => r.nc === nc).catch(() => false))) this.ready = null;
  }

  /** Create the stream unless it exists (an existing one is left as its operator configured it). */
  private async ensureStream(nc: NatsConnection): Promise<void> {
    const jsm = await jetstreamManager(nc, { timeout: this.options.timeoutMs });
    try {
      await jsm.streams.info(this.options.stream);
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamNotFound) throw error;
      await jsm.streams.add({ name: this.options.stream, subjects: this.options.subjects });
    }
  }
}
