import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { SameSecond } from './same-second.js';

describe('SameSecond', () => {
  it('makes a value once per key and second, and forgets everything when the second turns', () => {
    const clock = new ManualClock(1_700_000_000_500);
    const memo = new SameSecond<{ n: number }>(clock);
    let made = 0;
    const make = () => ({ n: ++made });
    const a = memo.get('a', make);
    expect(memo.get('a', make)).toBe(a);
    expect(memo.get('b', make)).not.toBe(a);
    clock.advance(499); // still the same second
    expect(memo.get('a', make)).toBe(a);
    clock.advance(1); // the next second
    expect(memo.get('a', make)).not.toBe(a);
    expect(made).toBe(3);
  });

  it('stops remembering at its size bound but still answers', () => {
    const memo = new SameSecond<number>(new ManualClock(0), 2);
    let made = 0;
    for (const key of ['a', 'b', 'c', 'c']) memo.get(key, () => ++made);
    expect(made).toBe(4); // 'c' was not kept
    expect(memo.get('a', () => -1)).toBe(1);
  });
});
