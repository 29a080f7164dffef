import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { newWebApiClient, type DTableWebAPIClient } from './dtable-web-api.js';

/** dtable-web-api's group, group-share and view-share functions against a listening server. */
describe.each(DIALECTS)('dtable-web-api against a listening server: groups and view shares (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let admin: TestUser;
  let client: DTableWebAPIClient; // alice
  let bobClient: DTableWebAPIClient;
  let adminClient: DTableWebAPIClient;
  let groupId: number;

  const login = async (server: string, user: TestUser) => {
    const c = newWebApiClient().init({ server, username: user.email, password: user.password });
    await c.login();
    return c;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    carol = await createUser(t, { name: 'Carol' });
    admin = await createUser(t, { admin: true });
    client = await login(server, alice);
    bobClient = await login(server, bob);
    adminClient = await login(server, admin);
  });
  afterAll(() => t.close());

  it('creates, gets, lists and renames a group', async () => {
    const created = await client.createGroup('Client team');
    expect(created.status).toBe(201);
    groupId = created.data.id;
    expect(created.data).toMatchObject({ name: 'Client team', owner: alice.virtualId, admins: [alice.virtualId] });
    expect((await client.getGroup(groupId)).data.name).toBe('Client team');
    expect((await client.listGroups()).data.map((g: { id: number }) => g.id)).toEqual([groupId]);
    expect((await client.renameGroup(groupId, 'Client team 2')).data.name).toBe('Client team 2');
  });

  it('adds members in bulk, lists, searches, makes an admin and removes a member', async () => {
    const added = await client.addGroupMembers(groupId, [bob.email, carol.email]);
    expect(added.data.success.map((m: { email: string }) => m.email)).toEqual([bob.virtualId, carol.virtualId]);
    expect(added.data.failed).toEqual([]);
    const members = await client.listGroupMembers(groupId);
    expect(members.data.map((m: { role: string }) => m.role)).toEqual(['Owner', 'Member', 'Member']);
    expect((await client.listGroupMembers(groupId, true)).data.map((m: { email: string }) => m.email)).toEqual([alice.virtualId]);
    expect((await client.searchGroupMember(groupId, 'Car')).data.map((m: { email: string }) => m.email)).toEqual([carol.virtualId]);
    expect((await client.setGroupAdmin(groupId, bob.virtualId, true)).data).toMatchObject({ is_admin: true, role: 'Admin' });
    expect((await client.deleteGroupMember(groupId, carol.virtualId)).data).toEqual({ success: true });
    expect((await client.listGroupMembers(groupId)).data).toHaveLength(2);
  });

  it('lists the group workspace, creates a base there, shares another base with the group', async () => {
    const list = (await client.listWorkspaces()).data.workspace_list;
    const ws = list.find((w: { type: string }) => w.type === 'group');
    expect(ws).toMatchObject({ group_id: groupId, group_owner: alice.virtualId, group_admins: [alice.virtualId, bob.virtualId] });
    const personal = list.find((w: { type: string }) => w.type === 'personal');

    await client.createTable('Personal base', alice.email);
    const share = await client.addTableGroupShare(personal.id, 'Personal base', [groupId], 'r');
    expect(share.data.dtable_group_share).toEqual({ group_id: groupId, group_name: 'Client team 2', permission: 'r' });
    expect((await client.listTableGroupShares(personal.id, 'Personal base')).data.dtable_group_share_list).toEqual([
      { group_id: groupId, group_name: 'Client team 2', permission: 'r' },
    ]);
    expect((await client.updateTableGroupShare(personal.id, 'Personal base', groupId, 'rw')).data).toEqual({ success: true });
    const seen = (await bobClient.listGroupSharedTables()).data.group_shared_dtables[String(groupId)];
    expect(seen.map((b: { name: string }) => b.name)).toContain('Personal base');
    // Bob (a member) gets a read-write Base-Token for it.
    const token = await bobClient.getTableAccessToken(personal.id, 'Personal base');
    expect(token.status).toBe(200);
    expect((await client.deleteTableGroupShare(personal.id, 'Personal base', groupId)).data).toEqual({ success: true });
    await expect(bobClient.getTableAccessToken(personal.id, 'Personal base')).rejects.toMatchObject({ response: { status: 403 } });
  });

  it('shares a view with a user and with the group; the recipients list, use and leave it', async () => {
    const personal = (await client.listWorkspaces()).data.workspace_list.find((w: { type: string }) => w.type === 'personal');
    const access = await client.getTableAccessToken(personal.id, 'Personal base');
    const uuid = access.data.dtable_uuid;
    const meta = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${uuid}/metadata/`, token: access.data.access_token });
    const tableId = meta.json().metadata.tables[0]._id;

    const userShare = await client.createDTableUserViewShare(personal.id, 'Personal base', tableId, '0000', 'r', carol.email, 'For Carol');
    expect(userShare.data).toMatchObject({ to_user: carol.virtualId, permission: 'r', table_id: tableId, view_id: '0000', shared_name: 'For Carol' });
    const listed = await client.listDTableUserViewShares(personal.id, 'Personal base', tableId, '0000');
    expect(listed.data.user_view_share_list.map((s: { id: number }) => s.id)).toEqual([userShare.data.id]);
    expect((await client.updateDTableUserViewShare(personal.id, 'Personal base', userShare.data.id, 'rw')).data.permission).toBe('rw');
    const carolClient = await login(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, carol);
    expect((await carolClient.listSharedViews()).data.view_share_list.map((s: { id: number }) => s.id)).toEqual([userShare.data.id]);
    const viewToken = await carolClient.getTableAccessTokenByUserViewShare(personal.id, 'Personal base', userShare.data.id);
    expect(viewToken.data.dtable_uuid).toBe(uuid);
    expect((await carolClient.leaveViewShare(userShare.data.id)).data).toEqual({ success: true });
    expect((await carolClient.listSharedViews()).data.view_share_list).toEqual([]);

    const groupShare = await client.createDTableGroupViewShare(personal.id, 'Personal base', tableId, '0000', 'r', [groupId]);
    const shareId = groupShare.data.group_view_share_list[0].id;
    const bobViews = (await bobClient.listGroupSharedViews()).data.group_shared_views[String(groupId)];
    expect(bobViews.map((v: { view_share_id: number }) => v.view_share_id)).toEqual([shareId]);
    expect((await bobClient.getTableAccessTokenByGroupViewShare(personal.id, 'Personal base', shareId)).status).toBe(200);
    expect((await client.listDTableGroupViewShares(personal.id, 'Personal base')).data.group_view_share_list).toHaveLength(1);
    expect((await client.updateDTableGroupViewShare(personal.id, 'Personal base', shareId, 'rw')).data.permission).toBe('rw');
    expect((await client.deleteDTableGroupViewShareByViewId(personal.id, 'Personal base', tableId, '0000')).data).toEqual({ success: true });
    expect((await client.listDTableGroupViewShares(personal.id, 'Personal base')).data.group_view_share_list).toEqual([]);
  });

  it('deletes view shares by id or by view, a group admin leaves a group view share, and the group trash lists and restores a base', async () => {
    const personal = (await client.listWorkspaces()).data.workspace_list.find((w: { type: string }) => w.type === 'personal');
    const access = await client.getTableAccessToken(personal.id, 'Personal base');
    const meta = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${access.data.dtable_uuid}/metadata/`, token: access.data.access_token });
    const tableId = meta.json().metadata.tables[0]._id;
    const userShares = async () => (await client.listDTableUserViewShares(personal.id, 'Personal base', tableId, '0000')).data.user_view_share_list;
    const groupShares = async () => (await client.listDTableGroupViewShares(personal.id, 'Personal base')).data.group_view_share_list;

    const byId = await client.createDTableUserViewShare(personal.id, 'Personal base', tableId, '0000', 'r', carol.email, 'By id');
    expect((await client.deleteDTableUserViewShare(personal.id, 'Personal base', byId.data.id)).data).toEqual({ success: true });
    expect(await userShares()).toEqual([]);
    await client.createDTableUserViewShare(personal.id, 'Personal base', tableId, '0000', 'r', carol.email, 'By view');
    expect((await client.deleteDTableUserViewShareByViewId(personal.id, 'Personal base', tableId, '0000')).data).toEqual({ success: true });
    expect(await userShares()).toEqual([]);

    const groupShare = (await client.createDTableGroupViewShare(personal.id, 'Personal base', tableId, '0000', 'r', [groupId])).data.group_view_share_list[0];
    expect((await client.deleteDTableGroupViewShare(personal.id, 'Personal base', groupShare.id)).data).toEqual({ success: true });
    expect(await groupShares()).toEqual([]);
    // Bob is an admin of the group: he may take the group off a view shared with it.
    const left = (await client.createDTableGroupViewShare(personal.id, 'Personal base', tableId, '0000', 'r', [groupId])).data.group_view_share_list[0];
    expect((await bobClient.leaveGroupViewShare(left.id)).data).toEqual({ success: true });
    expect(await groupShares()).toEqual([]);
    expect((await bobClient.listGroupSharedViews()).data.group_shared_views[String(groupId)] ?? []).toEqual([]);

    const groupWs = (await client.listWorkspaces()).data.workspace_list.find((w: { group_id?: number }) => w.group_id === groupId);
    const made = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: { name: 'Trash me', workspace_id: groupWs.id } });
    expect(made.statusCode, made.body).toBe(201);
    expect((await client.deleteTable(groupWs.id, 'Trash me')).status).toBe(200);
    const trash = (await client.listGroupTrashDTables(groupId)).data;
    const trashed = trash.trash_dtable_list.find((b: { name: string }) => b.name === 'Trash me');
    expect(trashed).toBeDefined();
    expect((await client.restoreGroupTrashDTable(trashed.uuid, groupId)).data).toEqual({ success: true });
    expect((await client.listGroupTrashDTables(groupId)).data.trash_dtable_list).toEqual([]);
    const back = (await client.listWorkspaces()).data.workspace_list.find((w: { group_id?: number }) => w.group_id === groupId);
    expect(back.table_list.map((b: { name: string }) => b.name)).toContain('Trash me');
  });

  it('system admin functions: list, create, members, transfer, dismiss', async () => {
    const all = await adminClient.sysAdminListAllGroups(1, 25);
    expect(all.data.groups.map((g: { id: number }) => g.id)).toContain(groupId);
    const created = await adminClient.sysAdminCreateNewGroup('By admin', carol.email);
    expect(created.data).toMatchObject({ name: 'By admin', owner: carol.virtualId });
    const id = created.data.id;
    expect((await adminClient.sysAdminAddGroupMember(id, [bob.email, alice.email])).data.success).toHaveLength(2);
    // The client appends `is_admin` to a Node form-data body, which takes text only (a browser's FormData would stringify a boolean).
    expect((await adminClient.sysAdminUpdateGroupMemberRole(id, bob.email, 'true')).data.role).toBe('Admin');
    expect((await adminClient.sysAdminListGroupMembers(id)).data.total_count).toBe(3);
    expect((await adminClient.sysAdminDeleteGroupMember(id, alice.email)).data).toEqual({ success: true });
    expect((await adminClient.sysAdminTransferGroup(bob.email, id)).data.owner).toBe(bob.virtualId);
    expect((await adminClient.sysAdminDismissGroupByID(id)).data).toEqual({ success: true });
  });

  it('transfers and deletes a group as its owner', async () => {
    const group = (await bobClient.createGroup('Short lived')).data;
    await bobClient.addGroupMembers(group.id, [alice.email]);
    expect((await bobClient.transferGroup(group.id, alice.email)).data.owner).toBe(alice.virtualId);
    expect((await client.deleteGroup(group.id)).data).toEqual({ success: true });
    await expect(client.getGroup(group.id)).rejects.toMatchObject({ response: { status: 404 } });
  });
});
