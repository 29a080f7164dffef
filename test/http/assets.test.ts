import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, TEST_PUBLIC_URL, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { STORAGES, storageEnv } from '../helpers/s3-server.js';
import { multipart, PNG_1X1 } from '../helpers/asset-fixtures.js';

const MAX = 4096;
const QUOTA = 10_000;

describe.each(DIALECTS.flatMap((d) => STORAGES.map((s) => [d, s] as const)))('assets (%s, %s storage)', (dialect, storage) => {
  let t: TestApp;
  let owner: TestUser;
  let reader: TestUser;
  let base: TestBase;
  let other: TestBase;
  let stopStorage: () => Promise<void>;

  const local = (url: string) => url.slice(TEST_PUBLIC_URL.length);
  async function uploadLink(b: TestBase, user = owner) {
    const res = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${b.workspaceId}/dtable-asset-upload-link/?name=${encodeURIComponent(b.name)}`, token: user.token });
    expect(res.statusCode).toBe(200);
    return res.json<{ upload_link: string; parent_path: string; img_relative_path: string; file_relative_path: string }>();
  }
  async function upload(b: TestBase, name: string, content: string | Buffer, fields: Record<string, string> = {}) {
    const link = await uploadLink(b);
    const body = multipart([
      { name: 'parent_dir', value: fields.parent_dir ?? link.parent_path },
      { name: 'relative_path', value: fields.relative_path ?? link.file_relative_path },
      { name: 'replace', value: fields.replace ?? '0' },
      { name: 'file', value: content, filename: name },
    ]);
    return t.request({ method: 'POST', url: `${local(link.upload_link)}?ret-json=1`, ...body });
  }
  async function download(b: TestBase, path: string) {
    const token = await apiToken(b);
    const res = await t.request({ method: 'GET', url: `/api/v2.1/dtable/app-download-link/?path=${encodeURIComponent(path)}`, token });
    return res;
  }
  const apiTokens = new Map<number, string>();
  async function apiToken(b: TestBase): Promise<string> {
    if (!apiTokens.has(b.id)) {
      const res = await t.request({ method: 'POST', url: basePath(b, 'api-tokens/'), token: owner.token, payload: { app_name: 'app', permission: 'rw' } });
      apiTokens.set(b.id, res.json<{ api_token: string }>().api_token);
    }
    return apiTokens.get(b.id)!;
  }

  beforeAll(async () => {
    const s = await storageEnv(storage);
    stopStorage = s.close;
    t = await createTestApp(dialect, { ...s.env, ASSET_MAX_BYTES: String(MAX), ASSET_QUOTA_BYTES: String(QUOTA) });
    owner = await createUser(t);
    reader = await createUser(t);
    base = await createBase(t, owner, 'Assets');
    other = await createBase(t, owner, 'Other');
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: reader.email, permission: 'r' } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await stopStorage?.();
  });

  it('lists, checks, renames and deletes with an Account-Token', async () => {
    const month = new Date(t.clock.now()).toISOString().slice(0, 7);
    expect((await upload(base, 'a.txt', 'aaa')).statusCode).toBe(200);
    expect((await upload(base, 'b.txt', 'bbbb')).statusCode).toBe(200);
    const list = await t.request({ method: 'GET', url: `/api/v2.1/dtable-asset/${base.uuid}/?parent_dir=/files/${month}`, token: owner.token });
    expect(list.json().dirent_list.map((d: { obj_name: string; file_size: number; is_file: boolean }) => [d.obj_name, d.file_size, d.is_file]).sort()).toEqual([
      ['a.txt', 3, true],
      ['b.txt', 4, true],
    ]);
    const root = await t.request({ method: 'GET', url: `/api/v2.1/dtable-asset/${base.uuid}/?parent_dir=/`, token: owner.token });
    expect(root.json().dirent_list).toEqual([expect.objectContaining({ is_file: false, obj_name: 'files' })]);
    const exists = (path: string) => t.request({ method: 'GET', url: `${basePath(base, 'asset-exists/')}?path=${encodeURIComponent(path)}`, token: reader.token });
    expect((await exists(`/files/${month}/a.txt`)).json()).toEqual({ is_exist: true });
    expect((await exists(`/files/${month}/zzz.txt`)).json()).toEqual({ is_exist: false });
    const renamed = await t.request({ method: 'POST', url: `/api/v2.1/dtable-asset/${base.uuid}/rename/`, token: owner.token, payload: { path: `/files/${month}/a.txt`, new_name: 'c.txt' } });
    expect(renamed.json()).toEqual({ success: true });
    expect((await exists(`/files/${month}/c.txt`)).json()).toEqual({ is_exist: true });
    expect((await exists(`/files/${month}/a.txt`)).json()).toEqual({ is_exist: false });
    const readerRename = await t.request({ method: 'POST', url: `/api/v2.1/dtable-asset/${base.uuid}/rename/`, token: reader.token, payload: { path: `/files/${month}/c.txt`, new_name: 'd.txt' } });
    expect(readerRename.statusCode).toBe(403);
    const batch = await t.request({ method: 'DELETE', url: `/api/v2.1/dtable-asset/${base.uuid}/batch-delete-assets/`, token: owner.token, payload: { parent_path: `/files/${month}`, asset_names: ['c.txt', 'b.txt'] } });
    expect(batch.json()).toEqual({ success: true });
    expect((await exists(`/files/${month}/b.txt`)).json()).toEqual({ is_exist: false });
    expect((await upload(base, 'e.txt', 'e')).statusCode).toBe(200);
    const recent = await t.request({ method: 'GET', url: `/api/v2.1/dtable-recent-asset/${base.uuid}/?months=2`, token: reader.token });
    expect(recent.json().file_list).toEqual([
      { date: month, file_items: [expect.objectContaining({ is_file: true, obj_name: 'e.txt', file_size: 1 })] },
      { date: expect.stringMatching(/^\d{4}-\d{2}$/), file_items: [] },
    ]);
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/dtable-asset/${base.uuid}/?path=${encodeURIComponent(`/files/${month}`)}`, token: owner.token });
    expect(del.json()).toEqual({ success: true });
    expect((await exists(`/files/${month}/e.txt`)).json()).toEqual({ is_exist: false });
  });

  it('serves a cell URL to an Account-Token with read access', async () => {
    const month = new Date(t.clock.now()).toISOString().slice(0, 7);
    await upload(base, 'pixel.png', PNG_1X1, { relative_path: `images/${month}` });
    const res = await t.request({ method: 'GET', url: `/workspace/${base.workspaceId}/asset/${base.uuid}/images/${month}/pixel.png`, token: reader.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-disposition']).toMatch(/^inline;/);
    expect(res.rawPayload.equals(PNG_1X1)).toBe(true);
    const stranger = await createUser(t);
    const denied = await t.request({ method: 'GET', url: `/workspace/${base.workspaceId}/asset/${base.uuid}/images/${month}/pixel.png`, token: stranger.token });
    expect(denied.statusCode).toBe(403);
  });

  describe('security', () => {
    it('refuses path traversal in the file name, relative_path and parent_dir, writing nothing', async () => {
      for (const [name, fields] of [
        ['../../escape.txt', {}],
        ['..', {}],
        ['a\\..\\b.txt', {}],
        ['ok.txt', { relative_path: '../../../etc' }],
        ['ok.txt', { relative_path: 'files/../../x' }],
        ['ok.txt', { parent_dir: `/asset/${other.uuid}` }],
        ['ok.txt', { parent_dir: '/asset/../..' }],
      ] as Array<[string, Record<string, string>]>) {
        const res = await upload(base, name, 'x', fields);
        expect(res.statusCode, `${name} ${JSON.stringify(fields)}`).toBe(400);
        expect(res.json()).toEqual({ error_msg: expect.any(String) });
      }
      const root = await t.request({ method: 'GET', url: `/api/v2.1/dtable-asset/${base.uuid}/?parent_dir=/`, token: owner.token });
      const names = JSON.stringify(root.json());
      expect(names).not.toContain('escape');
      expect(names).not.toContain('ok.txt');
      const token = await apiToken(base);
      for (const path of ['../x', '/files/../../x', `/asset/${other.uuid}/../x`]) {
        const res = await t.request({ method: 'GET', url: `/api/v2.1/dtable/app-download-link/?path=${encodeURIComponent(path)}`, token });
        expect(res.statusCode).toBe(400);
      }
    });

    it("a download link of one base never reads another base's file; a tampered or expired link is refused", async () => {
      const month = new Date(t.clock.now()).toISOString().slice(0, 7);
      await upload(other, 'secret.txt', 'other base secret');
      await upload(base, 'mine.txt', 'mine');
      // Base A's token asking for B's path finds nothing in A.
      const cross = await download(base, `/asset/${other.uuid}/files/${month}/secret.txt`);
      expect(cross.statusCode).toBe(404);
      const sameName = await download(base, `/files/${month}/secret.txt`);
      expect(sameName.statusCode).toBe(404);
      const mine = await download(base, `/files/${month}/mine.txt`);
      const link = local(mine.json<{ download_link: string }>().download_link);
      expect((await t.request({ method: 'GET', url: link })).body).toBe('mine');
      // Swap the signed body of A's link for one naming B: the signature no longer matches.
      const [, , , token, name] = link.split('/');
      const [body, mac] = token!.split('.');
      const claims = JSON.parse(Buffer.from(body!, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, base: other.uuid, path: `files/${month}/secret.txt` })).toString('base64url');
      const tampered = await t.request({ method: 'GET', url: `/seafhttp/files/${forged}.${mac}/${name}` });
      expect(tampered.statusCode).toBe(403);
      t.clock.advance(3601_000);
      const expired = await t.request({ method: 'GET', url: link });
      expect(expired.statusCode).toBe(403);
    });

    it('upload links are UUID-shaped tokens of one base; a tampered, unknown, expired or malformed one is 403 and stores nothing', async () => {
      const link = await uploadLink(base);
      const token = link.upload_link.split('/seafhttp/upload-api/')[1]!;
      expect(token).toMatch(/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/);
      const send = (tok: string, name: string) =>
        t.request({
          method: 'POST',
          url: `/seafhttp/upload-api/${tok}?ret-json=1`,
          ...multipart([
            { name: 'parent_dir', value: link.parent_path },
            { name: 'relative_path', value: link.file_relative_path },
            { name: 'file', value: 'x', filename: name },
          ]),
        });
      // The base id is the first 8 hex digits: naming the other base breaks the MAC.
      const otherId = other.id.toString(16).padStart(8, '0');
      const swapped = otherId + token.slice(8);
      const refused = [swapped, '00000000-0000-4000-8000-000000000000', token.slice(0, -1) + (token.endsWith('0') ? '1' : '0'), token.toUpperCase(), 'not-a-token'];
      for (const [i, bad] of refused.entries()) {
        const res = await send(bad, `bad-${i}.txt`);
        expect(res.statusCode, bad).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Upload link is invalid or expired.' });
      }
      const good = await send(token, 'good.txt');
      expect(good.statusCode).toBe(200);
      const listed = await download(base, `/${link.file_relative_path}/bad-0.txt`);
      expect(listed.statusCode).toBe(404);
      t.clock.advance(3601_000);
      expect((await send(token, 'late.txt')).statusCode).toBe(403);
      expect((await download(base, `/${link.file_relative_path}/late.txt`)).statusCode).toBe(404);
    });

    it('serves HTML and SVG uploads as attachments, never inline, whatever the client claims', async () => {
      const month = new Date(t.clock.now()).toISOString().slice(0, 7);
      await upload(base, 'evil.html', '<html><script>alert(document.cookie)</script></html>');
      await upload(base, 'evil.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
      await upload(base, 'fake.png', '<html><script>alert(1)</script></html>');
      for (const name of ['evil.html', 'evil.svg', 'fake.png']) {
        const link = local((await download(base, `/files/${month}/${name}`)).json<{ download_link: string }>().download_link);
        const res = await t.request({ method: 'GET', url: link });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-disposition'], name).toMatch(/^attachment;/);
        expect(res.headers['content-type'], name).not.toMatch(/html|svg|image/);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['content-security-policy']).toContain('sandbox');
      }
    });

    it('refuses an oversized upload (413) and a quota overrun, storing nothing', async () => {
      const month = new Date(t.clock.now()).toISOString().slice(0, 7);
      const big = await upload(base, 'big.bin', Buffer.alloc(MAX + 1, 1));
      expect(big.statusCode).toBe(413);
      expect(big.json().error_msg).toMatch(/too large/);
      const fresh = await createBase(t, owner, 'Quota');
      for (let i = 0; i < 2; i++) expect((await upload(fresh, `part${i}.bin`, Buffer.alloc(MAX, 2))).statusCode).toBe(200);
      const over = await upload(fresh, 'over.bin', Buffer.alloc(QUOTA - 2 * MAX + 1, 3));
      expect(over.statusCode).toBe(413);
      expect(over.json().error_msg).toMatch(/quota/);
      const exists = await t.request({ method: 'GET', url: `${basePath(fresh, 'asset-exists/')}?path=/files/${month}/over.bin`, token: owner.token });
      expect(exists.json()).toEqual({ is_exist: false });
      const bigExists = await t.request({ method: 'GET', url: `${basePath(base, 'asset-exists/')}?path=/files/${month}/big.bin`, token: owner.token });
      expect(bigExists.json()).toEqual({ is_exist: false });
    });
  });

  it('a copied base gets copies of the files; a deleted base keeps them in the trash and loses them when purged', async () => {
    const month = new Date(t.clock.now()).toISOString().slice(0, 7);
    await upload(base, 'keep.txt', 'kept');
    const workspaces = await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: reader.token });
    const readerWorkspace = workspaces.json().workspace_list[0].id as number;
    const copy = await t.request({ method: 'POST', url: '/api/v2.1/dtable-copy/', token: reader.token, payload: { src_workspace_id: base.workspaceId, dst_workspace_id: readerWorkspace, name: base.name } });
    expect(copy.statusCode).toBe(200);
    const copied = copy.json().dtable as { uuid: string; name: string };
    const store = t.container.assets.storage;
    expect((await store.list(`${copied.uuid}/`)).map((o) => o.key)).toContain(`${copied.uuid}/files/${month}/keep.txt`);
    const opened = await store.open(`${copied.uuid}/files/${month}/keep.txt`);
    let text = '';
    for await (const chunk of opened!) text += chunk.toString();
    expect(text).toBe('kept');
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${readerWorkspace}/dtable/`, token: reader.token, payload: { name: copied.name } });
    expect(del.statusCode).toBe(200);
    expect((await store.list(`${copied.uuid}/`)).length).toBeGreaterThan(0);
    const purge = await t.request({ method: 'DELETE', url: '/api/v2.1/trash-dtables/', token: reader.token });
    expect(purge.statusCode).toBe(200);
    expect(await store.list(`${copied.uuid}/`)).toEqual([]);
    expect((await store.list(`${base.uuid}/`)).map((o) => o.key)).toContain(`${base.uuid}/files/${month}/keep.txt`);
  });
});
