import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { STORAGES, storageEnv } from '../helpers/s3-server.js';
import { PNG_1X1 } from '../helpers/asset-fixtures.js';

const run = promisify(execFile);
const sdkDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python-sdk');
const phpSdkDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'php-sdk');
/** Debian's php-cli with php-curl, php-mbstring and php-guzzlehttp-guzzle (Guzzle's autoloader in /usr/share/php). */
const PHP = process.env.TEST_PHP ?? '/usr/bin/php';
/** Debian's python3 with python3-requests, -socketio, -dateutil, -ply (installed by .ci/run). */
const PYTHON = process.env.TEST_PYTHON ?? '/usr/bin/python3';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(DIALECTS.flatMap((d) => STORAGES.map((s) => [d, s] as const)))('official clients, file calls (%s, %s storage)', (dialect, storage) => {
  let t: TestApp;
  let server: string;
  let owner: TestUser;
  let base: TestBase;
  let apiToken: string;
  let stopStorage: () => Promise<void>;

  beforeAll(async () => {
    const s = await storageEnv(storage);
    stopStorage = s.close;
    const port = await freePort();
    server = `http://127.0.0.1:${port}`;
    t = await createTestApp(dialect, { ...s.env, PUBLIC_URL: server });
    await t.app.listen({ port, host: '127.0.0.1' });
    owner = await createUser(t);
    base = await createBase(t, owner, 'Files');
    const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'files', permission: 'rw' } });
    apiToken = created.json<{ api_token: string }>().api_token;
    const token = await baseToken(t, owner, base);
    for (const [name, type] of [['Attachment', 'file'], ['Picture', 'image']]) {
      const column = await t.request({ method: 'POST', url: `/api-gateway/api/v2/dtables/${base.uuid}/columns/`, token, payload: { table_name: 'Table1', column_name: name, column_type: type } });
      expect(column.statusCode, column.body).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await stopStorage?.();
  });

  it('Python SDK: upload_bytes_file, upload_local_file, get_file_download_link and download_file work unchanged', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'basegate-py-'));
    const png = path.join(dir, 'pixel.png');
    writeFileSync(png, PNG_1X1);
    const { stdout } = await run(PYTHON, [path.join(sdkDir, 'files_flow.py'), server, apiToken, png, dir], {
      env: { ...process.env, PYTHONPATH: sdkDir },
      timeout: 60_000,
    });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, any>;
    const month = new Date(t.clock.now()).toISOString().slice(0, 7);
    expect(out.upload_link).toMatchObject({ parent_path: `/asset/${base.uuid}`, img_relative_path: `images/${month}`, file_relative_path: `files/${month}` });
    expect(out.bytes).toMatchObject({ type: 'file', name: 'hello world.txt', size: 17 });
    expect(out.bytes.url).toBe(`${server}/workspace/${base.workspaceId}/asset/${base.uuid}/files/${month}/hello%20world.txt`);
    // Without replace the original keeps both files.
    expect(out.bytes_again).toMatchObject({ name: 'hello world (1).txt', size: 11 });
    expect(out.replaced).toMatchObject({ name: 'hello world.txt', size: 9 });
    expect(out.image).toMatchObject({ type: 'image', name: 'pixel.png', size: PNG_1X1.length });
    expect(out.download_link).toMatch(new RegExp(`^${server}/seafhttp/files/`));
    expect(out.downloaded).toBe('replaced!');
    expect(out.downloaded_image_size).toBe(PNG_1X1.length);
    // The original's cell values: file `[{name, size, type, url}]`, image `[url]`.
    expect(out.row.Attachment).toEqual([{ type: 'file', name: 'hello world.txt', size: 17, url: out.bytes.url }]);
    expect(out.row.Picture).toEqual([out.image.url]);
  }, 90_000);

  it('PHP SDK (vendored, run by php-cli): getUploadLink, uploadFile, getFileDownloadLink and deleteBaseAsset unchanged', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'basegate-php-'));
    const file = path.join(dir, 'notes.txt');
    writeFileSync(file, 'php sdk bytes');
    const { stdout } = await run(PHP, [path.join(phpSdkDir, 'files_flow.php'), server, apiToken, file], { timeout: 60_000 });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out.upload_link).toMatch(new RegExp(`^${server}/seafhttp/upload-api/`));
    expect(out.file_relative_path).toMatch(/^files\/\d{4}-\d{2}$/);
    // The client's uploadFile checks the link's token against a UUID pattern before it sends anything.
    expect(out.upload_link).toMatch(/\/seafhttp\/upload-api\/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/);
    expect(out.upload_refused).toBeUndefined();
    expect(out.uploaded).toEqual([{ name: 'notes.txt', id: expect.stringMatching(/^[0-9a-f]{40}$/), size: 13 }]);
    expect(out.download_link).toMatch(new RegExp(`^${server}/`));
    expect(out.downloaded).toBe('php sdk bytes');
    expect(out.deleted).toEqual({ success: true });
    expect(out.after_delete).toBe(404);
  }, 90_000);

  it('PHP SDK shapes: Bearer API-Token, the file part before the fields, DELETE app-asset', async () => {
    // The PHP client (seatable-api-php FilesImagesApi) is not runnable here (no PHP/Composer);
    // these are its exact requests: paths, `Authorization: Bearer`, and form part order.
    const auth = { authorization: `Bearer ${apiToken}`, accept: 'application/json' };
    const link = await request(`${server}/api/v2.1/dtable/app-upload-link/`, { headers: auth });
    expect(link.statusCode).toBe(200);
    const body = (await link.body.json()) as { upload_link: string; parent_path: string; file_relative_path: string; workspace_id: number };
    expect(body.workspace_id).toBe(base.workspaceId);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('php bytes')]), 'php.txt');
    form.append('parent_dir', body.parent_path);
    form.append('replace', '0');
    form.append('relative_path', body.file_relative_path);
    const token = body.upload_link.split('/seafhttp/upload-api/')[1];
    const upload = await request(`${server}/seafhttp/upload-api/${token}?ret-json=1`, { method: 'POST', headers: auth, body: form });
    expect(upload.statusCode).toBe(200);
    expect(await upload.body.json()).toEqual([{ name: 'php.txt', id: expect.stringMatching(/^[0-9a-f]{40}$/), size: 9 }]);
    const filePath = `/${body.file_relative_path}/php.txt`;
    const dl = await request(`${server}/api/v2.1/dtable/app-download-link/?path=${encodeURIComponent(filePath)}`, { headers: auth });
    const { download_link } = (await dl.body.json()) as { download_link: string };
    const file = await request(download_link);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-disposition']).toMatch(/^attachment;/);
    expect(await file.body.text()).toBe('php bytes');
    const del = await request(`${server}/api/v2.1/dtable/app-asset/?path=${encodeURIComponent(filePath)}`, { method: 'DELETE', headers: auth });
    expect(await del.body.json()).toEqual({ success: true });
    const gone = await request(`${server}/api/v2.1/dtable/app-download-link/?path=${encodeURIComponent(filePath)}`, { headers: auth });
    expect(gone.statusCode).toBe(404);
    await gone.body.dump();
  });
});
