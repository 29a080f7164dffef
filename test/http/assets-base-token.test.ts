import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, TEST_PUBLIC_URL, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';

/**
 * A file's download link with a Base-Token (#29 item 4): what the console's preview uses, so a read-only
 * user and an external link's visitor (who have no Account-Token for the file URL) can open a file.
 */
describe.each(DIALECTS)('asset download link with a Base-Token (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let reader: TestUser;
  let base: TestBase;
  let other: TestBase;
  let path: string;

  const local = (url: string) => url.slice(TEST_PUBLIC_URL.length);
  const link = (uuid: string, token: string, file: string) =>
    t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${uuid}/asset-download-link/?path=${encodeURIComponent(file)}`, token });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    reader = await createUser(t);
    base = await createBase(t, owner, 'Files');
    other = await createBase(t, owner, 'Other');
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: reader.email, permission: 'r' } });
    const upload = (await t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/dtable-asset-upload-link/?name=Files`, token: owner.token })).json();
    const body = multipart([
      { name: 'parent_dir', value: upload.parent_path },
      { name: 'relative_path', value: upload.file_relative_path },
      { name: 'file', value: 'the report', filename: 'report.txt' },
    ]);
    expect((await t.request({ method: 'POST', url: `${local(upload.upload_link)}?ret-json=1`, ...body })).statusCode).toBe(200);
    path = `/${upload.file_relative_path}/report.txt`;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it("a read-only user's and an external link's Base-Token get a link that downloads the file", async () => {
    const created = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} });
    const external = (await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${created.json().token}/access-token/` })).json().access_token as string;
    for (const token of [await baseToken(t, reader, base), external]) {
      const res = await link(base.uuid, token, path);
      expect(res.statusCode).toBe(200);
      const download = await t.request({ method: 'GET', url: local(res.json().download_link) });
      expect(download.statusCode).toBe(200);
      expect(download.body).toBe('the report');
    }
  });

  it('refuses another base, a missing file, a path out of the base and no token, changing nothing', async () => {
    const token = await baseToken(t, reader, base);
    expect((await link(other.uuid, token, path)).statusCode).toBe(403);
    expect((await link(base.uuid, token, '/files/none.txt')).json()).toEqual({ error_msg: 'File not found.' });
    for (const bad of ['../x', `/asset/${other.uuid}/../x`]) expect((await link(base.uuid, token, bad)).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/asset-download-link/?path=${encodeURIComponent(path)}` })).statusCode).toBe(403);
  });

  it('a Base-Token scoped without files may not', async () => {
    const scoped = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'rows-only', permission: 'r', operations: ['read_rows'] } });
    expect(scoped.statusCode).toBe(201);
    const access = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: scoped.json().api_token });
    const res = await link(base.uuid, access.json().access_token, path);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_msg).toContain('files');
  });
});
