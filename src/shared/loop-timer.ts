/**
 * The timer of a background loop (dispatcher, webhook deliverer): whether it runs, at most one
 * pending tick, and a stop that waits for the work in flight. The loops keep their own tick logic.
 */
export class LoopTimer {
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
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

  /**
   * Run the tick after `delay` ms, replacing a pending one; nothing once stopped. A delay of 0 runs
   * it on the next turn of the event loop (setImmediate): node clamps setTimeout(0) to 1 ms, and a
   * wake after every commit (the dispatcher's) would add that millisecond to every delivery.
   */
  schedule(delay: number): void {
    if (!this.running) return;
    this.clear();
    if (delay <= 0) {
      this.immediate = setImmediate(() => {
        this.immediate = null;
        this.tick();
      });
      this.immediate.unref();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
    }, delay);
    this.timer.unref();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  /** Stop ticking, then wait for `inFlight` (its failure is the loop's to log, not the caller's). */
  async stop(inFlight: Promise<unknown> | null): Promise<void> {
    this.running = false;
    this.clear();
    if (inFlight) await inFlight.catch(() => undefined);
  }
}
