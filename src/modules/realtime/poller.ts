/**
 * Runs `pass` every `intervalMs` once started (never, with 0: only when woken), and at once on `wake`;
 * never two passes at a time (a wake during a pass runs one more right after it).
 */
export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => this.wake(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  wake(): void {
    if (!this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch(this.onError)
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }
}
