/** Longest stretch of synchronous work before a long loop lets the event loop take a turn. */
export const TURN_MS = 10;

/**
 * Lets a long synchronous loop (formulas over a thousand rows) give other requests their turn:
 * `await turns.pass()` after each item yields to the event loop once `TURN_MS` of work has gone by,
 * and is free otherwise. Only scheduling depends on the clock, never a result.
 */
export class EventLoopTurns {
  private since = performance.now();

  async pass(): Promise<void> {
    if (performance.now() - this.since < TURN_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
