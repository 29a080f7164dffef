import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/index.js';

describe('service endpoints and conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(() => t.close());

  it.each(['/ping/', '/ping', '/api2/ping/', '/api2/ping', '/api-gateway/api/v2/ping/'])('GET %s answers the JSON string "pong"', async (url) => {
    const res = await t.request({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe('"pong"');
  });

  it('GET /server-info/ names version and edition', async () => {
    const res = await t.request({ method: 'GET', url: '/server-info/' });
    expect(res.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), edition: 'self-hosted' });
  });

  it('carries a request id, taking the caller\'s x-request-id when given', async () => {
    const own = await t.request({ method: 'GET', url: '/ping/', headers: { 'x-request-id': 'abc-123' } });
    expect(own.headers['x-request-id']).toBe('abc-123');
    const fresh = await t.request({ method: 'GET', url: '/ping/' });
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unknown = await t.request({ method: 'GET', url: '/nope/' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error_msg: 'Not found.' });
  });

  it('serves an OpenAPI document generated from the route schemas', async () => {
    const res = await t.request({ method: 'GET', url: '/api/docs/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ['/api2/auth-token/', '/api/v2.1/dtables/', '/api/v2.1/workspace/{workspace_id}/dtable/{base_name}/share/']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.paths['/api/v2.1/workspaces/'].get.responses['200']).toBeDefined();
  });
});
