import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

const verifies = (secret: string, request: { body: string; headers: Record<string, unknown> }) => {
  try {
    new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe.each(DIALECTS)('webhook secret rotation (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect));
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    ({ base, receiver } = await freshTarget(t, owner));
    t.clock.set(Date.now()); // standardwebhooks checks the timestamp against the real time
  });
  afterEach(() => receiver?.close());

  it('both signatures verify during the window; only the new one after it', async () => {
    const hook = await createWebhook(t, owner, base, { url: receiver.url(), secret: 'old-secret' });
    const rotate = (payload: Record<string, unknown>) =>
      t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/rotate-secret/`), token: owner.token, payload });
    const rotated = await rotate({ secret: 'new-secret', grace_seconds: 3600 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json<{ webhook: Record<string, unknown> }>().webhook).toMatchObject({ settings: { secret: '********' }, previous_secret_valid_until: expect.any(String) });
    expect(rotated.body).not.toContain('new-secret');

    await emit(t, [changeEvent(base)]);
    await drain(t);
    const during = receiver.received.at(-1)!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies('old-secret', during)).toBe(true);
    expect(verifies('new-secret', during)).toBe(true);

    // Ping signs the same way.
    expect((await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/ping/`), token: owner.token })).statusCode).toBe(200);
    expect(verifies('old-secret', receiver.received.at(-1)!)).toBe(true);

    t.clock.set(Date.now() + 3_601_000);
    await emit(t, [changeEvent(base)]);
    await drain(t);
    const after = receiver.received.at(-1)!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const sign = (secret: string) =>
      `v1,${createHmac('sha256', secret).update(`${String(after.headers['webhook-id'])}.${String(after.headers['webhook-timestamp'])}.${after.body}`).digest('base64')}`;
    expect(after.headers['webhook-signature']).toBe(sign('new-secret'));
    expect(after.headers['webhook-signature']).not.toContain(sign('old-secret'));

    // Bad input: a clear 400, nothing changed.
    expect((await rotate({})).statusCode).toBe(400);
    expect((await rotate({ secret: 'x', grace_seconds: -1 })).statusCode).toBe(400);
    expect((await rotate({ secret: 'x', grace_seconds: 999_999_999 })).statusCode).toBe(400);
    expect((await rotate({ secret: '********' })).statusCode).toBe(400);
  });
});
