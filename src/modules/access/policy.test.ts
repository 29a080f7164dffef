import { describe, expect, it } from 'vitest';
import {
  GROUP_REQUIRED,
  REQUIRED,
  atLeast,
  decide,
  groupRoleAtLeast,
  isSharePermission,
  mayAdminister,
  mayCreateBaseIn,
  permissionOn,
  tokenPermissionFor,
  type BasePermission,
} from './policy.js';

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

  describe('decide', () => {
    it('judges a user by ownership, then by share', () => {
      expect(decide({ kind: 'user', userId: 1, ownerId: 1, share: null })).toEqual({
        permission: 'owner',
        tokenPermission: 'rw',
        canRead: true,
        canWrite: true,
      });
      expect(decide({ kind: 'user', userId: 1, ownerId: 1, share: 'r' }).permission).toBe('owner');
      expect(decide({ kind: 'user', userId: 2, ownerId: 1, share: 'admin' }).permission).toBe('admin');
      const reader = decide({ kind: 'user', userId: 2, ownerId: 1, share: 'r' });
      expect([reader.permission, reader.tokenPermission, reader.canRead, reader.canWrite]).toEqual(['r', 'r', true, false]);
    });

    it('gives a user without share nothing, and no Base-Token', () => {
      expect(decide({ kind: 'user', userId: 2, ownerId: 1, share: null })).toEqual({
        permission: 'none',
        tokenPermission: null,
        canRead: false,
        canWrite: false,
      });
    });

    it('lets API-Tokens and Base-Tokens write only with rw', () => {
      for (const kind of ['api-token', 'base-token'] as const) {
        expect(decide({ kind, permission: 'rw' })).toMatchObject({ permission: 'rw', tokenPermission: 'rw', canWrite: true });
        expect(decide({ kind, permission: 'r' })).toMatchObject({ permission: 'r', tokenPermission: 'r', canRead: true, canWrite: false });
        // Anything unexpected reads only, never more.
        expect(decide({ kind, permission: 'admin' })).toMatchObject({ permission: 'r', canWrite: false });
        expect(decide({ kind, permission: '' })).toMatchObject({ permission: 'r', canWrite: false });
      }
    });

    it('makes an external link read-only', () => {
      expect(decide({ kind: 'external-link' })).toEqual({ permission: 'r', tokenPermission: 'r', canRead: true, canWrite: false });
    });

    it('never lets a token or link manage the base or change locked rows', () => {
      for (const facts of [{ kind: 'api-token', permission: 'rw' }, { kind: 'base-token', permission: 'rw' }, { kind: 'external-link' }] as const) {
        const { permission } = decide(facts);
        expect(atLeast(permission, REQUIRED.changeLockedRows)).toBe(false);
        expect(atLeast(permission, REQUIRED.manageShares)).toBe(false);
      }
    });
  });

  it('opens the admin endpoints to system administrators only', () => {
    expect(mayAdminister({ isStaff: true })).toBe(true);
    expect(mayAdminister({ isStaff: false })).toBe(false);
  });

  it('lets only the owner of a personal workspace create bases in it', () => {
    expect(mayCreateBaseIn({ owner_id: 1, group_id: null }, 1)).toBe(true);
    expect(mayCreateBaseIn({ owner_id: 1, group_id: null }, 2)).toBe(false);
    expect(mayCreateBaseIn({ owner_id: 1, group_id: null }, 2, 'admin')).toBe(false);
  });

  it("lets every member of a group create bases in the group's workspace, and nobody else", () => {
    const ws = { owner_id: 1, group_id: 7 };
    for (const role of ['owner', 'admin', 'member'] as const) expect(mayCreateBaseIn(ws, 2, role)).toBe(true);
    expect(mayCreateBaseIn(ws, 2, null)).toBe(false);
  });

  it('gives group roles, group shares and own shares together the best of them', () => {
    const user = { kind: 'user', userId: 2, ownerId: 1, share: null } as const;
    expect(decide({ ...user, groupRole: 'member' }).permission).toBe('rw');
    expect(decide({ ...user, groupRole: 'admin' }).permission).toBe('owner');
    expect(decide({ ...user, groupRole: 'owner' }).permission).toBe('owner');
    expect(decide({ ...user, groupShares: ['r'] }).permission).toBe('r');
    expect(decide({ ...user, groupShares: ['r', 'admin', 'rw'] }).permission).toBe('admin');
    expect(decide({ ...user, share: 'r', groupShares: ['rw'] }).permission).toBe('rw');
    expect(decide({ ...user, share: 'admin', groupRole: 'member' }).permission).toBe('admin');
    expect(decide({ ...user, groupShares: [] }).permission).toBe('none');
    expect(decide({ ...user, groupShares: [] }).tokenPermission).toBeNull();
  });

  it('orders group roles owner ⊃ admin ⊃ member ⊃ none', () => {
    expect(groupRoleAtLeast('owner', GROUP_REQUIRED.own)).toBe(true);
    expect(groupRoleAtLeast('admin', GROUP_REQUIRED.own)).toBe(false);
    expect(groupRoleAtLeast('admin', GROUP_REQUIRED.manage)).toBe(true);
    expect(groupRoleAtLeast('member', GROUP_REQUIRED.manage)).toBe(false);
    expect(groupRoleAtLeast('member', GROUP_REQUIRED.view)).toBe(true);
    expect(groupRoleAtLeast(null, GROUP_REQUIRED.view)).toBe(false);
  });
});
