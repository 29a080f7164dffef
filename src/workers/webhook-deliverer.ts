import type { Clock } from '../shared/clock.js';
import { LoopTimer } from '../shared/loop-timer.js';

/** What the loop drives: a round (tests), the continuous pool (the loop), and the next due time. */
export interface DeliveryRounds {
  runOnce(): Promise<number>;
  runPool(keepGoing: () => boolean): Promise<number>;
  nextDueAt(): Promise<number | null>;
  /** New work was queued: a pool waiting on its attempts claims again at once. */
  nudge?(): void;
  /** Resolves once no attempt is in flight, also those started outside a round (the in-process hand-off). */
  settled?(): Promise<void>;
  /** Keep this worker's leases its own (PostgreSQL); called every `heartbeatMs` while started. */
  heartbeat?(): Promise<void>;
}

export interface WebhookDelivererOptions {
  /** Longest sleep between rounds: deliveries queued by other instances are seen within this. */
  pollIntervalMs?: number;
  heartbeatMs?: number;
  log?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void };
}

/**
 * The webhook delivery loop of the `worker` role: rounds back to back while there is work, then
 * sleeps until the next delivery is due (at most the poll interval) or until woken. Tests do not
 * start it; they call `runOnce()` with a manual clock.
 */
export class WebhookDeliverer {
  private readonly pollIntervalMs: number;
  private readonly loop = new LoopTimer(() => void this.tick());
  private current: Promise<number> | null = null;
  private woken = false;
  private ticking = false;
  private beating: NodeJS.Timeout | null = null;

  constructor(
    private readonly rounds: DeliveryRounds,
    private readonly clock: Clock,
    private readonly options: WebhookDelivererOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  useLogger(log: NonNullable<WebhookDelivererOptions['log']>): void {
    this.options.log = log;
  }

  /** Report an unexpected error of a delivery (never the secret: it is not part of any context). */
  log(error: unknown, context: string): void {
    this.options.log?.error({ err: error, context }, 'webhook delivery error');
  }

  /** A delivery the SSRF guard refused: worth an operator's attention (someone may probe the network). */
  warnBlocked(message: string): void {
    this.options.log?.warn?.({ reason: message }, 'webhook delivery refused by the address guard');
  }

  /** One round now (shared with work already in flight). Returns the attempts it made. */
  runOnce(): Promise<number> {
    return this.track(() => this.rounds.runOnce());
  }

  private track(work: () => Promise<number>): Promise<number> {
    if (this.current) return this.current;
    const run = work().finally(() => {
      this.current = null;
    });
    this.current = run;
    return run;
  }

  /** Whether the loop runs (the `worker` role in this process); the dispatcher hands deliveries off only then. */
  get running(): boolean {
    return this.loop.started;
  }

  /** Deliveries were queued: run soon instead of at the next poll. No-op unless started. */
  wake(): void {
    if (!this.loop.started) return;
    this.woken = true;
    this.rounds.nudge?.();
    if (!this.ticking) this.loop.schedule(0); // a running tick sees the flag when it ends
  }

  start(): void {
    this.loop.start();
    if (this.rounds.heartbeat) {
      const beat = () =>
        void this.rounds.heartbeat!().catch((error: unknown) => this.options.log?.error({ err: error }, 'webhook worker heartbeat failed'));
      beat();
      this.beating = setInterval(beat, this.options.heartbeatMs ?? 2_000);
      this.beating.unref();
    }
  }

  /** Stop the loop and wait for the round in flight and every attempt (bounded by the timeout). */
  async stop(): Promise<void> {
    if (this.beating) clearInterval(this.beating);
    this.beating = null;
    await this.loop.stop(this.current);
    await this.rounds.settled?.();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    // Wakes come after the queuing transaction committed, so one round sees their deliveries.
    this.woken = false;
    let delay = this.pollIntervalMs;
    try {
      // The pool keeps claiming while there is due work, without a timer in between.
      await this.track(() => this.rounds.runPool(() => this.loop.started));
      const due = await this.rounds.nextDueAt();
      if (due !== null) delay = Math.min(this.pollIntervalMs, Math.max(0, due - this.clock.now()));
    } catch (error) {
      this.options.log?.error({ err: error }, 'webhook delivery round failed');
    }
    // A wake that came in meanwhile must not be lost to the longer sleep.
    if (this.woken) delay = 0;
    this.ticking = false;
    this.loop.schedule(delay);
  }
}
