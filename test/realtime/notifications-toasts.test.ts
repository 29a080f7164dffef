import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, createRule, gateway, modifiedRule, ruleBase, share, updateRow, type RuleBase } from '../http/notification-fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

describe.each(DIALECTS)('live channel: new-notification and ui-toast (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let base: RuleBase;
  const live: Record<string, LiveClient> = {};

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
    t.container.dispatcher.start();
    [alice, bob, carol] = [await createUser(t), await createUser(t), await createUser(t)];
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    await share(t, alice, base, carol, 'rw');
    for (const [name, user] of [['alice', alice], ['bob', bob], ['carol', carol]] as const) {
      live[name] = await joined(url, base.uuid, await baseToken(t, user, base));
    }
  });
  afterAll(async () => {
    Object.values(live).forEach((c) => c.close());
    await t.close();
  });

  const notices = (name: string) => live[name]!.messages('new-notification') as Array<Record<string, unknown>>;

  it('pushes a rule notification at once to exactly the notified user, in the inbox record shape', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], {}, { default_msg: '{Name} changed' }));
    const [rowId] = await addRows(t, base, [{ Name: 'Ship it', Priority: 1 }]);
    await updateRow(t, base, rowId!, { Priority: 2 });
    await waitFor(() => notices('bob').length === 1, 'the notification');
    await settle(400);
    expect(notices('bob')).toEqual([
      {
        id: expect.any(Number),
        username: bob.virtualId,
        dtable_uuid: base.uuid,
        msg_type: 'notification_rules',
        created_at: expect.any(String),
        detail: expect.objectContaining({ rule_id: rule.id, msg: 'Ship it changed', row_id_list: [rowId] }),
        seen: 0,
      },
    ]);
    expect(notices('alice')).toEqual([]);
    expect(notices('carol')).toEqual([]);
    const inbox = await t.request({ method: 'GET', url: gateway(base, 'notifications/'), token: await baseToken(t, bob, base) });
    expect(inbox.json().notification_list[0].id).toBe(notices('bob')[0]!.id);
  });

  it('pushes notifications written by other modules (a disabled webhook notice), and none that rolled back', async () => {
    await t.container.db.transaction().execute((trx) =>
      t.container.notifications.notifyUser(trx, { userId: carol.id, msgType: 'webhook_disabled', detail: { reason: 'test' }, dtableUuid: base.uuid }),
    );
    await t.container.db
      .transaction()
      .execute(async (trx) => {
        await t.container.notifications.notifyUser(trx, { userId: alice.id, msgType: 'webhook_disabled', detail: { reason: 'rolled back' } });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await waitFor(() => notices('carol').length === 1, 'the notification');
    await settle(600);
    expect(notices('carol')[0]).toMatchObject({ username: carol.virtualId, msg_type: 'webhook_disabled', detail: { reason: 'test' } });
    expect(notices('alice')).toEqual([]);
    expect(notices('bob')).toHaveLength(1);
  });

  it('POST …/ui-toasts/ answers {"success": true} and passes the toast to the base room', async () => {
    const res = await t.request({
      method: 'POST',
      url: gateway(base, 'ui-toasts/'),
      token: base.token,
      payload: { to_user: bob.virtualId, toast_type: 'warning', detail: { msg: 'hello world!' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    await waitFor(() => live.carol!.messages('ui-toast').length === 1, 'the toast');
    expect(live.bob!.messages('ui-toast')).toEqual([{ to_user: bob.virtualId, toast_type: 'warning', detail: { msg: 'hello world!' } }]);
  });

  it('refuses bad toasts with 400 and the field, without a token with 403, and sends nothing', async () => {
    const before = live.bob!.messages('ui-toast').length;
    const cases: Array<[unknown, string]> = [
      [{ toast_type: 'success', detail: { msg: 'x' } }, 'to_user invalid.'],
      [{ to_user: bob.virtualId, toast_type: 'shout', detail: { msg: 'x' } }, 'toast_type invalid.'],
      [{ to_user: bob.virtualId, detail: 'x' }, 'detail invalid.'],
      [{ to_user: bob.virtualId, detail: { msg: 'x'.repeat(2001) } }, 'detail.msg invalid.'],
    ];
    for (const [payload, message] of cases) {
      const res = await t.request({ method: 'POST', url: gateway(base, 'ui-toasts/'), token: base.token, payload: payload as object });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
    const anonymous = await t.request({ method: 'POST', url: gateway(base, 'ui-toasts/'), payload: { to_user: 'x', detail: { msg: 'x' } } });
    expect(anonymous.statusCode).toBe(403);
    await settle(200);
    expect(live.bob!.messages('ui-toast')).toHaveLength(before);
  });
});
