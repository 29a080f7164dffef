import { describe, expect, it } from 'vitest';
import { LocalWindows } from './local-windows.js';

describe('LocalWindows', () => {
  it('counts hits in a fixed window from the first hit, then starts a new one', () => {
    const windows = new LocalWindows(60_000);
    expect(windows.hit('a', 1_000)).toEqual({ count: 1, msLeft: 60_000 });
    expect(windows.hit('a', 31_000)).toEqual({ count: 2, msLeft: 30_000 });
    expect(windows.hit('b', 31_000)).toEqual({ count: 1, msLeft: 60_000 });
    expect(windows.hit('a', 61_000)).toEqual({ count: 1, msLeft: 60_000 });
  });

  it('stays within its size: ended windows are swept, and if none ended it starts over', () => {
    const windows = new LocalWindows(1_000, 2);
    windows.hit('a', 0);
    windows.hit('b', 500);
    // 'a' ended at 1000: swept to make room; 'b' keeps counting.
    expect(windows.hit('c', 1_200).count).toBe(1);
    expect(windows.hit('b', 1_300).count).toBe(2);
    // Full of running windows: start over rather than grow.
    expect(windows.hit('d', 1_400).count).toBe(1);
    expect(windows.hit('b', 1_450).count).toBe(1);
  });
});
