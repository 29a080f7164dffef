import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword, usePasswordHashCost, verifyPassword } from './crypto.js';

describe('password hashes', () => {
  afterEach(() => usePasswordHashCost(16384));

  it('are scrypt at N=16384 by default, salted, and verify only the right password', async () => {
    const one = await hashPassword('correct horse');
    const two = await hashPassword('correct horse');
    expect(one).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(one).not.toBe(two);
    expect(await verifyPassword('correct horse', one)).toBe(true);
    expect(await verifyPassword('correct horsE', one)).toBe(false);
    expect(await verifyPassword('correct horse', 'plain$text')).toBe(false);
  });

  it('verify at the cost each hash names, whatever the cost of new hashes', async () => {
    const strong = await hashPassword('pw-1');
    usePasswordHashCost(1024);
    const cheap = await hashPassword('pw-2');
    expect(cheap).toMatch(/^scrypt\$1024\$/);
    expect(await verifyPassword('pw-1', strong)).toBe(true);
    expect(await verifyPassword('pw-2', cheap)).toBe(true);
    expect(await verifyPassword('pw-1', cheap)).toBe(false);
  });

  it('refuse a test cost that is not a power of two from 1024 to the real cost', () => {
    for (const bad of [0, 512, 1000, 32768]) expect(() => usePasswordHashCost(bad)).toThrow(/power of two/);
  });
});
