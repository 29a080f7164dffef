import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, createWebhook, drain } from './webhooks-support.js';

describe.each(DIALECTS)('webhooks end to end through the rows API (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let token: string;
  let receiver: Receiver;
  const rows = () => `/api-gateway/api/v2/dtables/${base.uuid}/rows/`;

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createUser(t);
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
  beforeEach(async () => {
    base = await createBase(t, owner);
    token = await baseToken(t, owner, base);
    receiver.received.length = 0;
  });

  it('append, update and delete rows: one signed POST per row change, in order, with the cells', async () => {
    await createWebhook(t, owner, base, { url: receiver.url(), secret: 'e2e-secret' });
    const appended = await t.request({ method: 'POST', url: rows(), token, payload: { table_name: 'Table1', rows: [{ Name: 'alpha' }, { Name: 'beta' }] } });
    expect(appended.statusCode).toBe(200);
    await t.container.dispatcher.runOnce();
    await drain(t);
    expect(receiver.received).toHaveLength(2);
    const inserts = receiver.bodies();
    expect(inserts.map((b) => [b.event, b.data.op_type, b.data.row_name])).toEqual([
      ['update', 'insert_row', 'alpha'],
      ['update', 'insert_row', 'beta'],
    ]);
    expect(inserts[0]!.data).toMatchObject({ dtable_uuid: base.uuid, op_user: owner.virtualId, table_name: 'Table1', op_app: null });
    expect(inserts[0]!.data.row_data).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Name', value: 'alpha', old_value: null })]));
    const rowId = inserts[0]!.data.row_id as string;

    const updated = await t.request({ method: 'PUT', url: rows(), token, payload: { table_name: 'Table1', updates: [{ row_id: rowId, row: { Name: 'gamma' } }] } });
    expect(updated.statusCode).toBe(200);
    const removed = await t.request({ method: 'DELETE', url: rows(), token, payload: { table_name: 'Table1', row_ids: [rowId] } });
    expect(removed.statusCode).toBe(200);
    await t.container.dispatcher.runOnce();
    await drain(t);
    const [, , modify, remove] = receiver.bodies();
    expect(modify!.data).toMatchObject({ op_type: 'modify_row', row_id: rowId, row_data: [expect.objectContaining({ column_name: 'Name', value: 'gamma', old_value: 'alpha' })] });
    expect(remove!.data).toMatchObject({ op_type: 'delete_row', row_id: rowId });
    expect(remove!.data.row_data).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Name', value: null, old_value: 'gamma' })]));
    for (const request of receiver.received) {
      expect(request.headers['x-seatable-signature']).toBe(`sha256=${createHmac('sha256', 'e2e-secret').update(request.body).digest('hex')}`);
    }
  });

  it('the running dispatcher and delivery worker deliver a committed append without being driven', async () => {
    await createWebhook(t, owner, base, { url: receiver.url() });
    t.container.dispatcher.start();
    t.container.webhooks.deliverer.start();
    try {
      const appended = await t.request({ method: 'POST', url: rows(), token, payload: { table_name: 'Table1', rows: [{ Name: 'one' }, { Name: 'two' }, { Name: 'three' }] } });
      expect(appended.statusCode).toBe(200);
      for (let i = 0; i < 200 && receiver.received.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
      expect(receiver.bodies().map((b) => b.data.row_name)).toEqual(['one', 'two', 'three']);
    } finally {
      await t.container.dispatcher.stop();
      await t.container.webhooks.deliverer.stop();
    }
  });
});
