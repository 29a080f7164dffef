import { describe, expect, it } from 'vitest';
import { atLeast, isSharePermission, permissionOn, tokenPermissionFor, type BasePermission } from './policy.js';

describe('base policy', () => {
  it('ranks owner ⊃ admin ⊃ rw ⊃ r ⊃ none', () => {
    const order: BasePermission[] = ['none', 'r', 'rw', 'admin', 'owner'];
    for (const [i, have] of order.entries()) {
      for (const [j, need] of order.entries()) {
        expect(atLeast(have, need), `${have} >= ${need}`).toBe(i >= j);
      }
    }
  });

  it('makes the workspace owner the owner whatever the share says', () => {
    expect(permissionOn(1, 1, null)).toBe('owner');
    expect(permissionOn(1, 1, 'r')).toBe('owner');
  });

  it('gives other users their share, or none', () => {
    expect(permissionOn(1, 2, 'rw')).toBe('rw');
    expect(permissionOn(1, 2, 'admin')).toBe('admin');
    expect(permissionOn(1, 2, undefined)).toBe('none');
  });

  it('maps base permissions onto Base-Token permissions', () => {
    expect(tokenPermissionFor('owner')).toBe('rw');
    expect(tokenPermissionFor('admin')).toBe('rw');
    expect(tokenPermissionFor('rw')).toBe('rw');
    expect(tokenPermissionFor('r')).toBe('r');
    expect(tokenPermissionFor('none')).toBeNull();
  });

  it('accepts only r, rw and admin as share permissions', () => {
    expect(['r', 'rw', 'admin'].every(isSharePermission)).toBe(true);
    expect(['', 'owner', 'RW', 'w', null, 1].some(isSharePermission)).toBe(false);
  });
});
