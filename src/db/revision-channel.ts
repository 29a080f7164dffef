import pg from 'pg';
import { CoalescedReader } from '../shared/coalesced-reader.js';
import type { ConnectionLog } from './connect.js';

/** The channel migration 0016's trigger notifies on; the payload is `<schema>:<base id>`. */
export const REVISION_CHANNEL = 'basegate_revision';

/**
 * Revision changes of bases (PostgreSQL), heard over a dedicated `LISTEN` connection, so cached
 * whole-base reads need no revision query per read (rows/base-snapshots.ts, docs/base-data.md).
 *
 * `generation` names one continuous listening session: it moves when the connection is lost and
 * again when a new one listens. Whatever was confirmed against the database while the channel was
 * listening in generation g stays current as long as no notification for it arrived and the channel
 * is still in generation g.
 *
 * `sync()` closes the window between another instance's commit and the arrival of its notification:
 * it sends an empty query on the listening connection and resolves after its answer. PostgreSQL
 * signals listening sessions while the writer commits, before the writer's client hears "committed",
 * and a listening session that is woken by a query first sends the notifications pending for it; so
 * every notification of a transaction that committed before `sync()` was called has been handled
 * (the `notification` event comes first) when it resolves. Concurrent calls share round trips
 * (CoalescedReader: each is answered by one sent after it was called).
 */
export class RevisionChannel {
  private client: pg.Client | null = null;
  private listening = false;
  private started = false;
  private closed = false;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private schema = '';
  private readonly listeners = new Set<(baseId: number) => void>();
  private readonly syncs = new CoalescedReader<0, number | undefined>(() => this.roundTrip());
  /** See the class comment; odd while listening. */
  generation = 0;
  /** The listening session's server process id (tests end it with pg_terminate_backend). */
  backendPid: number | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    private log: ConnectionLog,
    private readonly syncTimeoutMs = 2_000,
  ) {}

  useLogger(log: ConnectionLog): void {
    this.log = log;
  }

  /** Calls `listener` with the base id of every revision change heard; starts listening on first use. */
  onChange(listener: (baseId: number) => void): void {
    this.listeners.add(listener);
    if (!this.started) {
      this.started = true;
      this.connect();
    }
  }

  /** True while the channel is listening (a generation is current). */
  get isListening(): boolean {
    return this.listening;
  }

  /**
   * Resolves with the generation once every notification committed before the call has been handled,
   * or undefined when the channel is not listening or was lost meanwhile (then ask the database).
   */
  sync(): Promise<number | undefined> {
    if (!this.listening) return Promise.resolve(undefined);
    return this.syncs.get(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.lost();
    await client?.end().catch(() => undefined);
  }

  private async roundTrip(): Promise<number | undefined> {
    const client = this.client;
    const generation = this.generation;
    if (!client || !this.listening) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.syncTimeoutMs)));
    try {
      const answer = await Promise.race([client.query(''), timeout]);
      if (answer === 'timeout') {
        // A stalled connection: drop it (the next one listens afresh); reads ask the database meanwhile.
        this.log.warn({ err: new Error(`no answer within ${this.syncTimeoutMs} ms`) }, 'revision channel stalled');
        this.drop(client);
        return undefined;
      }
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    return this.listening && this.generation === generation ? generation : undefined;
  }

  private connect(): void {
    if (this.closed) return;
    const client = new pg.Client({ ...this.config, application_name: 'basegate:revisions' });
    this.client = client;
    client.on('error', (err) => {
      if (this.client === client && this.listening) this.log.warn({ err }, 'revision channel lost; whole-base reads ask the database until it is back');
      this.drop(client);
    });
    client.on('end', () => this.drop(client));
    client.on('notification', (message) => {
      if (this.client !== client || message.channel !== REVISION_CHANNEL || !message.payload) return;
      const colon = message.payload.lastIndexOf(':');
      if (message.payload.slice(0, colon) !== this.schema) return;
      const baseId = Number(message.payload.slice(colon + 1));
      for (const listener of this.listeners) listener(baseId);
    });
    (async () => {
      await client.connect();
      const { rows } = await client.query<{ schema: string; pid: number }>('SELECT current_schema() AS schema, pg_backend_pid() AS pid');
      this.schema = rows[0]!.schema;
      await client.query(`LISTEN ${REVISION_CHANNEL}`);
      if (this.client !== client || this.closed) return;
      this.backendPid = rows[0]!.pid;
      this.listening = true;
      this.generation += 1;
      this.retryMs = RETRY_MIN_MS;
    })().catch(() => this.drop(client));
  }

  /** The connection is gone or unusable: stop trusting the channel, and connect again after a pause. */
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.lost();
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private lost(): void {
    if (this.listening) this.generation += 1;
    this.listening = false;
    this.client = null;
    this.backendPid = undefined;
  }
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
