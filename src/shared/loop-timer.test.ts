import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LoopTimer } from './loop-timer.js';

describe('LoopTimer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ticks at once on start, and only once per start', () => {
    const tick = vi.fn();
    const loop = new LoopTimer(tick);
    loop.start();
    loop.start();
    expect(loop.started).toBe(true);
    vi.advanceTimersByTime(0);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('keeps one pending tick: a new schedule replaces the old one', () => {
    const tick = vi.fn();
    const loop = new LoopTimer(tick);
    loop.start();
    vi.advanceTimersByTime(0);
    loop.schedule(1000);
    loop.schedule(50);
    vi.advanceTimersByTime(50);
    expect(tick).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(2000);
    expect(tick).toHaveBeenCalledTimes(2);
  });

  it('schedules nothing before start or after stop, and stop waits for the work in flight', async () => {
    const tick = vi.fn();
    const loop = new LoopTimer(tick);
    loop.schedule(0);
    vi.advanceTimersByTime(10);
    expect(tick).not.toHaveBeenCalled();

    loop.start();
    loop.schedule(100);
    let finish!: () => void;
    const inFlight = new Promise<void>((resolve) => (finish = resolve));
    let stopped = false;
    const stopping = loop.stop(inFlight).then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
    vi.advanceTimersByTime(1000);
    expect(tick).not.toHaveBeenCalled();
    loop.schedule(0);
    vi.advanceTimersByTime(10);
    expect(tick).not.toHaveBeenCalled();
  });

  it('runs a zero delay on the next turn of the event loop, not after a clamped millisecond', async () => {
    vi.useRealTimers();
    const tick = vi.fn();
    const loop = new LoopTimer(tick);
    loop.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(tick).toHaveBeenCalledTimes(1);
    // A timed schedule replaces a pending immediate one, and the other way round.
    loop.schedule(0);
    loop.schedule(60_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tick).toHaveBeenCalledTimes(1);
    loop.schedule(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tick).toHaveBeenCalledTimes(2);
    await loop.stop(null);
  });

  it('does not pass on the failure of the work it waited for', async () => {
    const loop = new LoopTimer(() => undefined);
    loop.start();
    await expect(loop.stop(Promise.reject(new Error('round failed')))).resolves.toBeUndefined();
  });
});
