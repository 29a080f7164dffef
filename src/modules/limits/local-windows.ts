/**
 * Fixed windows counted synchronously in this process's memory: what rate-limiter-flexible's memory
 * store counts, without a promise per call (a scoped API-Token's budget is spent on every gateway
 * call it makes). A window starts at a key's first hit and lasts `windowMs`; ended windows are swept
 * when the map is full, so it stays bounded. Keys are strings, or numbers (an API-Token's id: no key built per call).
 */
export class LocalWindows<K extends string | number = string> {
  private readonly windows = new Map<K, { count: number; endsAt: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts one hit of `key` at `now` (ms): the count in its window so far, and the ms left of the window. */
  hit(key: K, now: number): { count: number; msLeft: number } {
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (!window && this.windows.size >= this.maxKeys) this.sweep(now);
      window = { count: 0, endsAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, msLeft: window.endsAt - now };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    // Every window still running: start over rather than grow (a budget then restarts early, never late).
    if (this.windows.size >= this.maxKeys) this.windows.clear();
  }
}
