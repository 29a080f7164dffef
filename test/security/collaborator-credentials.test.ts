import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

// docs/tokens.md: API-Tokens, webhooks and external links belong to the base and are kept when the
// collaborator who created them loses access (share removed, or user deleted).
describe.each(DIALECTS)('credentials of a collaborator who loses access (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    admin = await createUser(t, { admin: true });
  });
  afterAll(() => t.close());

  it('keeps their API-Tokens, webhooks and links working after unsharing and after deleting the user', async () => {
    const collab = await createUser(t);
    const base = await createBase(t, owner);
    const share = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: collab.email, permission: 'admin' } });
    expect(share.statusCode).toBe(201);

    const apiToken = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: collab.token, payload: { app_name: 'collab-app', permission: 'r' } });
    expect(apiToken.statusCode).toBe(201);
    const webhook = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: collab.token, payload: { url: 'https://hooks.example.com/collab' } });
    expect(webhook.statusCode).toBe(200);
    const link = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: collab.token });
    expect(link.statusCode).toBe(200);

    const stillWorks = async () => {
      const exchange = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${apiToken.json().api_token}` } });
      expect(exchange.statusCode).toBe(200);
      const hooks = (await t.request({ method: 'GET', url: basePath(base, 'webhooks/'), token: owner.token })).json().webhook_list;
      expect(hooks).toEqual([expect.objectContaining({ url: 'https://hooks.example.com/collab', is_valid: true, creator: collab.virtualId })]);
      const viaLink = await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${link.json().token}/access-token/` });
      expect(viaLink.statusCode).toBe(200);
    };

    const unshare = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: collab.email } });
    expect(unshare.statusCode).toBe(200);
    // The collaborator's own access is gone …
    const own = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: collab.token });
    expect(own.statusCode).toBe(403);
    // … what they created for the base is not.
    await stillWorks();

    const deleted = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/users/${collab.email}/`, token: admin.token });
    expect(deleted.statusCode).toBe(200);
    await stillWorks();
  });
});
