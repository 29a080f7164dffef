import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestDatabase } from '../../../test/helpers/db.js';
import { migrateToLatest, type DbHandle } from '../../db/index.js';
import type { AccountUser } from '../accounts/index.js';
import { BaseAccess, userAccessIn } from './base-access.js';

// The facts side of the access module on a real database: it reads owner and share, and the policy decides.
describe.each(DIALECTS)('BaseAccess (%s)', (dialect) => {
  let handle: DbHandle;
  let access: BaseAccess;
  const ids = { owner: 0, reader: 0, admin: 0, stranger: 0, workspace: 0, base: 0 };
  const user = (id: number): AccountUser => ({ id, virtualId: `u${id}@auth.local`, email: `u${id}@example.com`, name: `u${id}`, isStaff: false, emailNotification: false, twoFactorSetupRequired: false });

  beforeAll(async () => {
    handle = await createTestDatabase(dialect);
    await migrateToLatest(handle.db);
    const db = handle.db;
    for (const name of ['owner', 'reader', 'admin', 'stranger'] as const) {
      const row = { virtual_id: `${name}@auth.local`, email: `${name}@example.com`, name, password_hash: 'x', is_staff: 0, is_active: 1, email_notification: 0, created_at: 0 };
      ids[name] = Number((await db.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow()).id);
    }
    ids.workspace = Number((await db.insertInto('workspaces').values({ owner_id: ids.owner, type: 'personal', created_at: 0 }).returning('id').executeTakeFirstOrThrow()).id);
    const base = { uuid: '0a1b2c3d-0000-4000-8000-000000000001', workspace_id: ids.workspace, name: 'Plans', creator_id: ids.owner, modifier_id: ids.owner, created_at: 0, updated_at: 0 };
    ids.base = Number((await db.insertInto('bases').values(base).returning('id').executeTakeFirstOrThrow()).id);
    await db
      .insertInto('base_shares')
      .values([
        { base_id: ids.base, user_id: ids.reader, permission: 'r', created_at: 0 },
        { base_id: ids.base, user_id: ids.admin, permission: 'admin', created_at: 0 },
      ])
      .execute();
    access = new BaseAccess(db);
  });

  afterAll(async () => {
    await handle?.close();
  });

  it('resolves in the contract order: unknown workspace 404, unknown base 404, too little permission 403', async () => {
    await expect(access.resolve(user(ids.owner), 999_999, 'Plans', 'r')).rejects.toMatchObject({ statusCode: 404 });
    await expect(access.resolve(user(ids.owner), 'abc', 'Plans', 'r')).rejects.toMatchObject({ statusCode: 404 });
    await expect(access.resolve(user(ids.owner), ids.workspace, 'Nope', 'r')).rejects.toMatchObject({ statusCode: 404 });
    await expect(access.resolve(user(ids.stranger), ids.workspace, 'Plans', 'r')).rejects.toMatchObject({ statusCode: 403 });
    await expect(access.resolve(user(ids.reader), ids.workspace, 'Plans', 'rw')).rejects.toMatchObject({ statusCode: 403 });
  });

  it('answers each user with the permission the policy gives their facts', async () => {
    const resolved = await access.resolve(user(ids.owner), String(ids.workspace), 'Plans', 'owner');
    expect(resolved.permission).toBe('owner');
    expect(resolved.base).toMatchObject({ id: ids.base, name: 'Plans', owner_id: ids.owner, creator_name: 'owner' });
    expect((await access.resolve(user(ids.admin), ids.workspace, 'Plans', 'admin')).permission).toBe('admin');
    const base = resolved.base;
    expect(await access.permissionOf(base, ids.reader)).toBe('r');
    expect(await access.permissionOf(base, ids.stranger)).toBe('none');
    expect(await access.decisionFor(base, ids.reader)).toMatchObject({ permission: 'r', tokenPermission: 'r', canWrite: false });
    expect(await access.decisionFor(base, ids.stranger)).toMatchObject({ permission: 'none', tokenPermission: null, canRead: false });
  });

  it('decides inside a transaction, seeing a share changed in it, and gives an unknown base nothing', async () => {
    await handle.db.transaction().execute(async (trx) => {
      expect((await userAccessIn(trx, ids.base, ids.owner)).permission).toBe('owner');
      expect((await userAccessIn(trx, ids.base, ids.admin)).permission).toBe('admin');
      await trx.updateTable('base_shares').set({ permission: 'rw' }).where('user_id', '=', ids.reader).execute();
      expect((await userAccessIn(trx, ids.base, ids.reader)).permission).toBe('rw');
      expect((await userAccessIn(trx, 999_999, ids.owner)).permission).toBe('none');
      await trx.updateTable('base_shares').set({ permission: 'r' }).where('user_id', '=', ids.reader).execute();
    });
  });

  it('finds bases by uuid and id, and lists what a user can reach', async () => {
    expect((await access.findByUuid('0a1b2c3d-0000-4000-8000-000000000001'))?.id).toBe(ids.base);
    expect(await access.findByUuid('0a1b2c3d-0000-4000-8000-00000000ffff')).toBeUndefined();
    expect((await access.findById(ids.base))?.uuid).toBe('0a1b2c3d-0000-4000-8000-000000000001');
    expect(await access.basesOfUser(ids.reader)).toEqual({ sharedBaseIds: [ids.base], owned: [] });
    expect(await access.basesOfUser(ids.owner)).toEqual({ sharedBaseIds: [], owned: [{ id: ids.base, uuid: '0a1b2c3d-0000-4000-8000-000000000001' }] });
  });
});
