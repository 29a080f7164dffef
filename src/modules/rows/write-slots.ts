/**
 * Write transactions in flight at once (PostgreSQL): below the pool size, so a burst of writes
 * waiting for one base's lock never holds every connection and the workers (dispatcher, deliverer)
 * and reads always find one. The pool has 10 connections by default.
 */
export const POSTGRES_WRITE_SLOTS = 7;

/** A counting semaphore; `maxActive` records the most holders at once (tests). */
export class Slots {
  private active = 0;
  maxActive = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {}

  acquire(): Promise<() => void> {
    if (this.active < this.size) return Promise.resolve(this.take());
    return new Promise((resolve) => this.waiting.push(() => resolve(this.take())));
  }

  private take(): () => void {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiting.shift()?.();
    };
  }
}
