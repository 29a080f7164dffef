import { describe, expect, it } from 'vitest';
import { freeName } from './base-copy.js';

describe('freeName', () => {
  it('keeps a free name, else takes the smallest free "(k)"', () => {
    expect(freeName('Plan', new Set(['Other']))).toBe('Plan');
    expect(freeName('Plan', new Set(['Plan']))).toBe('Plan (1)');
    expect(freeName('Plan', new Set(['Plan', 'Plan (1)', 'Plan (3)']))).toBe('Plan (2)');
  });

  it('shortens a long name so the numbered one stays within 255 characters', () => {
    const long = 'é'.repeat(255);
    const named = freeName(long, new Set([long]));
    expect([...named]).toHaveLength(255);
    expect(named.endsWith(' (1)')).toBe(true);
  });
});
