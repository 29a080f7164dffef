/**
 * Wakes change-feed readers waiting on a base when a write to it commits (this instance's writer, and
 * other instances' revision notifications on PostgreSQL). Every wait is bounded by its own timeout.
 */
export class CommitSignal {
  private readonly waiters = new Map<number, Set<() => void>>();

  notify(baseId: number): void {
    const set = this.waiters.get(baseId);
    if (!set) return;
    this.waiters.delete(baseId);
    for (const wake of set) wake();
  }

  /** Resolves on the next commit to `baseId`, after `timeoutMs`, or when `signal` aborts. */
  wait(baseId: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(baseId);
      if (!set) this.waiters.set(baseId, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(baseId) === set) this.waiters.delete(baseId);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  /** Wake every waiter (shutdown). */
  wakeAll(): void {
    for (const baseId of [...this.waiters.keys()]) this.notify(baseId);
  }
}
