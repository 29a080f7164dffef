import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, dispatch, ruleBase, share, updateRow, type RuleBase } from '../http/notification-fixtures.js';
import { newWebApiClient, type DTableWebAPIClient } from './dtable-web-api.js';

describe.each(DIALECTS)('dtable-web-api against a listening server: notification rules and notifications (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let base: RuleBase;
  let client: DTableWebAPIClient;
  let bobClient: DTableWebAPIClient;
  let adminClient: DTableWebAPIClient;

  const ruleJson = (name: string, users: string[]) => ({
    run_condition: 'per_update',
    trigger: { rule_name: name, table_id: '0000', view_id: '0000', condition: 'rows_modified' },
    action: { type: 'notify', users, default_msg: '{Name} changed' },
  });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    admin = await createUser(t, { name: 'Admin', admin: true });
    base = await ruleBase(t, alice, 'Client rules');
    await share(t, alice, base, bob, 'rw');
    client = newWebApiClient().init({ server, token: alice.token });
    bobClient = newWebApiClient().init({ server, token: bob.token });
    adminClient = newWebApiClient().init({ server, token: admin.token });
  });
  afterAll(() => t.close());

  it('adds, lists, updates and deletes rules', async () => {
    const added = await client.addNotificationRule(base.workspaceId, base.name, ruleJson('From the client', [bob.virtualId]));
    expect(added.status).toBe(200);
    expect(added.data).toMatchObject({ id: expect.any(Number), creator: 'Alice', is_valid: 1, last_trigger_time: '', trigger: { rule_name: 'From the client' } });

    const listed = await client.listNotificationRules(base.workspaceId, base.name);
    expect(listed.data.dtable_notification_rule_list.map((r: { id: number }) => r.id)).toEqual([added.data.id]);

    const updated = await client.updateNotificationRule(base.workspaceId, base.name, added.data.id, ruleJson('Renamed', [bob.virtualId, alice.virtualId]));
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ id: added.data.id, trigger: { rule_name: 'Renamed' }, action: { users: [bob.virtualId, alice.virtualId] } });

    await expect(client.addNotificationRule(base.workspaceId, base.name, { ...ruleJson('x', [bob.virtualId]), run_condition: 'sometimes' })).rejects.toMatchObject({
      response: { status: 400, data: { error_msg: 'run_condition sometimes invalid.' } },
    });

    const deleted = await client.deleteNotificationRule(base.workspaceId, base.name, added.data.id);
    expect(deleted.data).toEqual({ success: true });
    await expect(client.deleteNotificationRule(base.workspaceId, base.name, added.data.id)).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('lists, marks and deletes notifications produced by a rule', async () => {
    await client.addNotificationRule(base.workspaceId, base.name, ruleJson('Watch', [bob.virtualId]));
    const [rowId] = await addRows(t, base, [{ Name: 'Row A' }]);
    await updateRow(t, base, rowId!, { Notes: 'changed' });
    await dispatch(t);

    const listed = await bobClient.listNotifications(1, 25);
    expect(listed.data.count).toBe(1);
    expect(listed.data.unseen_count).toBe(1);
    expect(listed.data.notification_list[0]).toMatchObject({ type: 'notification_rules', seen: false, detail: { msg: 'Row A changed', rule_name: 'Watch' } });
    expect((await bobClient.getUnseenNotificationCount()).data.unseen_count).toBe(1);

    const marked = await bobClient.markNoticeAsRead(listed.data.notification_list[0].id);
    expect(marked.data).toEqual({ success: true });
    expect((await bobClient.listNotifications()).data.unseen_count).toBe(0);
    expect((await bobClient.updateNotifications('general')).data).toEqual({ success: true });

    const deleted = await bobClient.deleteNotifications();
    expect(deleted.data).toEqual({ success: true });
    expect((await bobClient.listNotifications(1, 25)).data).toEqual({ notification_list: [], count: 0, unseen_count: 0 });
  });

  it('runs the four system-admin operations', async () => {
    const valid = (await client.addNotificationRule(base.workspaceId, base.name, ruleJson('Keep', [bob.virtualId]))).data;
    const broken = (await client.addNotificationRule(base.workspaceId, base.name, ruleJson('Broken', [bob.virtualId]))).data;
    const doomed = (await client.addNotificationRule(base.workspaceId, base.name, ruleJson('Doomed', [bob.virtualId]))).data;
    await t.container.db.updateTable('notification_rules').set({ is_valid: 0 }).where('id', '=', broken.id).execute();

    const all = await adminClient.sysAdminListAllNotificationRules(1, 100);
    expect(all.data.count).toBeGreaterThanOrEqual(3);
    expect(all.data.notification_rule_list.map((r: { id: number }) => r.id)).toEqual(expect.arrayContaining([valid.id, broken.id, doomed.id]));

    const invalid = await adminClient.sysAdminListInvalidNotificationRules(1, 25);
    expect(invalid.data).toMatchObject({ count: 1, invalid_notification_rule_list: [{ id: broken.id, is_valid: 0, dtable_uuid: base.uuid }] });

    expect((await adminClient.sysAdminDeleteNotificationRule(doomed.id)).data).toEqual({ success: true });
    await expect(adminClient.sysAdminDeleteNotificationRule('nope')).rejects.toMatchObject({ response: { status: 400, data: { error_msg: 'rid invalid.' } } });
    expect((await adminClient.sysAdminDeleteInvalidNotificationRules()).data).toEqual({ success: true });

    const left = (await adminClient.sysAdminListAllNotificationRules(1, 100)).data.notification_rule_list.map((r: { id: number }) => r.id);
    expect(left).toContain(valid.id);
    expect(left).not.toContain(broken.id);
    expect(left).not.toContain(doomed.id);

    await expect(client.sysAdminListAllNotificationRules(1, 25)).rejects.toMatchObject({ response: { status: 403 } });
  });
});
