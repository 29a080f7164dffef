import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, drain, emit } from '../http/webhooks-support.js';
import { newWebApiClient, type DTableWebAPIClient } from './dtable-web-api.js';

async function status(promise: Promise<unknown>): Promise<{ status: number; data: unknown }> {
  try {
    await promise;
  } catch (error) {
    const response = (error as { response?: { status: number; data: unknown } }).response;
    if (response) return response;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe.each(DIALECTS)('dtable-web-api webhooks against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let web: DTableWebAPIClient;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    owner = await createUser(t);
    base = await createBase(t, owner, 'Hooks & more: ünïcode base');
    web = newWebApiClient().init({ server, token: owner.token });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('createDTableWebhook (multipart), getDTableWebhooks, updateDTableWebhook, deleteDTableWebhook', async () => {
    const created = await web.createDTableWebhook(base.workspaceId, base.name, receiver.url('/first'), 'client-secret');
    expect(created.status).toBe(200);
    const webhook = created.data.webhook;
    expect(webhook).toMatchObject({ dtable_uuid: base.uuid, url: receiver.url('/first'), creator: owner.virtualId, is_valid: true, settings: { secret: '********' } });

    const noSecret = await web.createDTableWebhook(base.workspaceId, base.name, receiver.url('/second'));
    expect(noSecret.data.webhook.settings).toEqual({});

    const listed = await web.getDTableWebhooks(base.workspaceId, base.name);
    expect(listed.status).toBe(200);
    expect(listed.data.webhook_list.map((w: { url: string }) => w.url)).toEqual([receiver.url('/first'), receiver.url('/second')]);
    expect(JSON.stringify(listed.data)).not.toContain('client-secret');

    const duplicate = await status(web.createDTableWebhook(base.workspaceId, base.name, receiver.url('/first')));
    expect(duplicate).toMatchObject({ status: 409, data: { error_msg: 'Webhook exists.' } });
    const bad = await status(web.createDTableWebhook(base.workspaceId, base.name, 'not a url'));
    expect(bad.status).toBe(400);

    const updated = await web.updateDTableWebhook(base.workspaceId, base.name, webhook.id, { url: receiver.url('/renamed'), secret: 'new-secret' });
    expect(updated.status).toBe(200);
    expect(updated.data.webhook).toMatchObject({ id: webhook.id, url: receiver.url('/renamed'), settings: { secret: '********' } });
    // An update with nothing to change is a plain re-save (re-enables an invalid webhook).
    await t.container.db.updateTable('webhooks').set({ is_valid: 0 }).where('id', '=', webhook.id).execute();
    const resaved = await web.updateDTableWebhook(base.workspaceId, base.name, webhook.id, {});
    expect(resaved.data.webhook).toMatchObject({ url: receiver.url('/renamed'), is_valid: true });

    // Deliveries reach the updated URL, signed with the updated secret.
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const renamed = receiver.received.find((r) => r.path === '/renamed')!;
    expect(renamed.headers['x-seatable-signature']).toBe(`sha256=${createHmac('sha256', 'new-secret').update(renamed.body).digest('hex')}`);
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/renamed', '/second']);

    const deleted = await web.deleteDTableWebhook(base.workspaceId, base.name, webhook.id);
    expect(deleted.status).toBe(200);
    expect(deleted.data).toEqual({ success: true });
    const gone = await status(web.deleteDTableWebhook(base.workspaceId, base.name, webhook.id));
    expect(gone).toMatchObject({ status: 404, data: { error_msg: 'Webhook not found.' } });
    const left = await web.getDTableWebhooks(base.workspaceId, base.name);
    expect(left.data.webhook_list.map((w: { url: string }) => w.url)).toEqual([receiver.url('/second')]);
  });
});
