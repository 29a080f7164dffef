import { describe, expect, it } from 'vitest';
import { ConnectionCounter } from './connection-counter.js';

describe('ConnectionCounter', () => {
  it('refuses a key at its cap, counts a socket once and frees a slot on remove', () => {
    const counter = new ConnectionCounter(2);
    expect(counter.add('ip', 'a')).toBe(true);
    expect(counter.add('ip', 'a')).toBe(true);
    expect(counter.add('ip', 'b')).toBe(true);
    expect(counter.add('ip', 'c')).toBe(false);
    expect(counter.add('other', 'c')).toBe(true);
    counter.remove('ip', 'a');
    expect(counter.count('ip')).toBe(1);
    expect(counter.add('ip', 'c')).toBe(true);
  });
});
