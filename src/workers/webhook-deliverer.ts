import type { Clock } from '../shared/clock.js';
import { LoopTimer } from './loop-timer.js';

/** What the loop drives: a round (tests), the continuous pool (the loop), and the next due time. */
export interface DeliveryRounds {
  runOnce(): Promise<number>;
  runPool(keepGoing: () => boolean): Promise<number>;
  nextDueAt(): Promise<number | null>;
}

export interface WebhookDelivererOptions {
  /** Longest sleep between rounds: deliveries queued by other instances are seen within this. */
  pollIntervalMs?: number;
  log?: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void };
}

/** After a wake, look again this soon: the waking transaction may not have committed yet. */
const WAKE_ECHO_MS = 25;

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

  /** Deliveries were queued: run soon instead of at the next poll. No-op unless started. */
  wake(): void {
    if (!this.loop.started) return;
    this.woken = true;
    if (!this.ticking) this.loop.schedule(0); // a running tick sees the flag when it ends
  }

  start(): void {
    this.loop.start();
  }

  /** Stop the loop and wait for the round in flight (its attempts are bounded by the timeout). */
  stop(): Promise<void> {
    return this.loop.stop(this.current);
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    const wasWoken = this.woken;
    this.woken = false;
    let delay = this.pollIntervalMs;
    try {
      // The pool keeps claiming while there is due work, without a timer in between.
      const attempts = await this.track(() => this.rounds.runPool(() => this.loop.started));
      if (wasWoken && attempts === 0) {
        delay = WAKE_ECHO_MS;
      } else {
        const due = await this.rounds.nextDueAt();
        if (due !== null) delay = Math.min(this.pollIntervalMs, Math.max(0, due - this.clock.now()));
      }
    } catch (error) {
      this.options.log?.error({ err: error }, 'webhook delivery round failed');
    }
    // A wake that came in meanwhile must not be lost to the longer sleep.
    if (this.woken) delay = 0;
    this.ticking = false;
    this.loop.schedule(delay);
  }
}
