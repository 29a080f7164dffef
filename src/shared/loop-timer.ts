/**
 * The timer of a background loop (dispatcher, webhook deliverer): whether it runs, at most one
 * pending tick, and a stop that waits for the work in flight. The loops keep their own tick logic.
 */
export class LoopTimer {
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly tick: () => void) {}

  get started(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Run the tick after `delay` ms, replacing a pending one; nothing once stopped. */
  schedule(delay: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
    }, delay);
    this.timer.unref();
  }

  /** Stop ticking, then wait for `inFlight` (its failure is the loop's to log, not the caller's). */
  async stop(inFlight: Promise<unknown> | null): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (inFlight) await inFlight.catch(() => undefined);
  }
}
