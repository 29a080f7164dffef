import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Clock } from '../../shared/clock.js';
import { apiError, badRequest, conflict, notFound } from '../../shared/errors.js';
import { assetKey, checkAssetPath, checkFileName, numberedName, safeAssetPath } from './asset-paths.js';
import type { AssetLinks } from './asset-links.js';
import { assetHeaders, servedType } from './content-policy.js';
import type { ReceivedUpload } from './receive-upload.js';
import type { AssetStorage, StoredObject } from './storage.js';

export interface AssetsSettings {
  publicUrl: string;
  maxBytes: number;
  /** 0 = unlimited. */
  quotaBytes: number;
}

export interface BaseRef {
  id: number;
  uuid: string;
  workspace_id: number;
}

export interface Dirent {
  is_file: boolean;
  obj_name: string;
  file_size: number;
  last_update: string;
}

export interface ServedAsset {
  headers: Record<string, string>;
  body: Readable;
}

/** The base's folders and files as the original's asset endpoints see them (docs/assets.md). */
export class AssetsService {
  constructor(
    readonly storage: AssetStorage,
    private readonly links: AssetLinks,
    private readonly clock: Clock,
    private readonly settings: AssetsSettings,
  ) {}

  /** `app-upload-link` / `dtable-asset-upload-link`: where and into which folders to upload. */
  uploadLink(base: BaseRef) {
    const month = new Date(this.clock.now()).toISOString().slice(0, 7);
    return {
      upload_link: `${this.settings.publicUrl}/seafhttp/upload-api/${this.links.signUpload(base.id)}`,
      parent_path: `/asset/${base.uuid}`,
      img_relative_path: `images/${month}`,
      file_relative_path: `files/${month}`,
      workspace_id: base.workspace_id,
    };
  }

  /** `app-download-link`: a signed link to one existing file, valid ASSET_LINK_TTL_SECONDS. */
  async downloadLink(baseUuid: string, rawPath: unknown): Promise<{ download_link: string }> {
    const path = checkAssetPath(rawPath, 'path', baseUuid);
    if (!(await this.storage.stat(assetKey(baseUuid, path)))) throw notFound('File not found.');
    const token = this.links.sign({ kind: 'd', base: baseUuid, path });
    const name = path.slice(path.lastIndexOf('/') + 1);
    return { download_link: `${this.settings.publicUrl}/seafhttp/files/${token}/${encodeURIComponent(name)}` };
  }

  /** Stores a received upload (the link's base, the original's `parent_dir`, `relative_path`, `replace`). */
  async store(baseUuid: string, upload: ReceivedUpload): Promise<Array<{ name: string; id: string; size: number }>> {
    const file = upload.file;
    if (!file) throw badRequest('file invalid.');
    try {
      const parent = upload.fields.parent_dir ?? `/asset/${baseUuid}`;
      if (checkAssetPath(parent, 'parent_dir', baseUuid, true) !== '') throw badRequest('parent_dir invalid.');
      const folder = checkAssetPath(upload.fields.relative_path ?? '', 'relative_path', baseUuid, true);
      const name = checkFileName(file.filename, 'file name');
      const replace = ['1', 'true', 'True'].includes(upload.fields.replace ?? '0');
      await this.checkQuota(baseUuid, file.size);
      const stored = await this.freeName(baseUuid, folder, name, replace);
      const type = await servedType(file.head);
      await this.storage.putFile(assetKey(baseUuid, join(folder, stored)), file.tempFile, type.contentType);
      return [{ name: stored, id: randomBytes(20).toString('hex'), size: file.size }];
    } finally {
      await rm(file.tempFile, { force: true });
    }
  }

  /** Stores a file from a base archive at `rawPath` (checked like any path; counts against the quota). */
  async importFile(baseUuid: string, rawPath: string, tempFile: string): Promise<void> {
    const path = checkAssetPath(rawPath, 'asset path', baseUuid);
    const handle = await open(tempFile);
    try {
      const head = Buffer.alloc(4100);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      const { size } = await handle.stat();
      await this.checkQuota(baseUuid, size);
      const type = await servedType(head.subarray(0, bytesRead));
      await this.storage.putFile(assetKey(baseUuid, path), tempFile, type.contentType);
    } finally {
      await handle.close();
    }
  }

  /**
   * The base an upload link is for (its id from a UUID-shaped token; its uuid from a signed token of
   * the earlier long form, still valid until it expires), or null for a bad or expired link.
   */
  uploadBase(token: string): { id: number } | { uuid: string } | null {
    const id = this.links.verifyUpload(token);
    if (id !== null) return { id };
    const claims = this.links.verify(token, 'u');
    return claims ? { uuid: claims.base } : null;
  }

  /** The file a download link names, with the headers it is served with. */
  async serve(token: string): Promise<ServedAsset> {
    const claims = this.links.verify(token, 'd');
    if (!claims || claims.kind !== 'd') throw apiError(403, 'Download link is invalid or expired.');
    return this.serveFile(claims.base, claims.path);
  }

  /** One file of a base (the caller checked access). */
  async serveFile(baseUuid: string, path: string): Promise<ServedAsset> {
    const key = assetKey(baseUuid, path);
    const info = await this.storage.stat(key);
    if (!info) throw notFound('File not found.');
    const head = info.size === 0 ? Buffer.alloc(0) : await readAll(await this.storage.open(key, { start: 0, end: Math.min(info.size, 4100) - 1 }));
    const body = await this.storage.open(key);
    if (!body) throw notFound('File not found.');
    return { headers: assetHeaders(path.slice(path.lastIndexOf('/') + 1), await servedType(head), info.size), body };
  }

  /** `GET dtable-asset/{uuid}/?parent_dir=`: the folder's files and sub-folders. */
  async list(baseUuid: string, parentDir: unknown): Promise<{ dirent_list: Dirent[] }> {
    const folder = checkAssetPath(parentDir ?? '/', 'parent_dir', baseUuid, true);
    const prefix = assetKey(baseUuid, folder) + (folder === '' ? '' : '/');
    const dirs = new Map<string, Dirent>();
    const files: Dirent[] = [];
    for (const o of await this.storage.list(prefix)) {
      const rest = o.key.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash === -1) files.push(dirent(true, rest, o));
      else {
        const name = rest.slice(0, slash);
        const dir = dirs.get(name);
        if (!dir || dir.last_update < iso(o.modified)) dirs.set(name, dirent(false, name, { ...o, size: 0 }));
      }
    }
    return { dirent_list: [...dirs.values(), ...files] };
  }

  /** `dtable-recent-asset`: the files uploaded in each of the last `months` months, newest month first. */
  async recent(baseUuid: string, rawMonths: unknown, fileType: unknown): Promise<{ file_list: Array<{ date: string; file_items: Dirent[] }> }> {
    const months = rawMonths === undefined || rawMonths === '' ? 3 : Number(rawMonths);
    if (!Number.isInteger(months) || months < 1 || months > 24) throw badRequest('months invalid.');
    const folders = fileType === 'image' ? ['images'] : fileType === 'file' ? ['files'] : ['files', 'images'];
    const now = new Date(this.clock.now());
    const file_list = [];
    for (let i = 0; i < months; i++) {
      const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1)).toISOString().slice(0, 7);
      const file_items: Dirent[] = [];
      for (const folder of folders) {
        const listed = await this.list(baseUuid, `${folder}/${date}`);
        file_items.push(...listed.dirent_list.filter((d) => d.is_file));
      }
      file_items.sort((a, b) => b.last_update.localeCompare(a.last_update));
      file_list.push({ date, file_items });
    }
    return { file_list };
  }

  /** Deletes a file, or a folder with everything in it. */
  async delete(baseUuid: string, rawPath: unknown): Promise<{ success: true }> {
    const path = checkAssetPath(rawPath, 'path', baseUuid);
    await this.remove(baseUuid, path);
    return { success: true };
  }

  async batchDelete(baseUuid: string, parentPath: unknown, names: unknown): Promise<{ success: true }> {
    const folder = checkAssetPath(parentPath ?? '/', 'parent_path', baseUuid, true);
    if (!Array.isArray(names) || names.length === 0 || names.length > 1000) throw badRequest('asset_names invalid.');
    const checked = names.map((n) => checkFileName(n, 'asset_names'));
    for (const name of checked) await this.remove(baseUuid, join(folder, name));
    return { success: true };
  }

  async rename(baseUuid: string, rawPath: unknown, newName: unknown): Promise<{ success: true }> {
    const path = checkAssetPath(rawPath, 'path', baseUuid);
    const name = checkFileName(newName, 'new_name');
    const from = assetKey(baseUuid, path);
    if (!(await this.storage.stat(from))) throw notFound('File not found.');
    const folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const to = assetKey(baseUuid, join(folder, name));
    if (to === from) return { success: true };
    if (await this.storage.stat(to)) throw conflict(`${name} already exists.`);
    await this.storage.rename(from, to);
    return { success: true };
  }

  async exists(baseUuid: string, rawPath: unknown): Promise<{ is_exist: boolean }> {
    const path = checkAssetPath(rawPath, 'path', baseUuid, true);
    if (path === '') return { is_exist: true };
    const key = assetKey(baseUuid, path);
    if (await this.storage.stat(key)) return { is_exist: true };
    return { is_exist: (await this.storage.list(`${key}/`)).length > 0 };
  }

  /** Bytes a base's files take. */
  async usage(baseUuid: string): Promise<number> {
    return (await this.storage.list(`${baseUuid}/`)).reduce((sum, o) => sum + o.size, 0);
  }

  /** Deletes these files of a base (paths checked as any asset path); a path that is no file is skipped. */
  async removeFiles(baseUuid: string, paths: string[]): Promise<void> {
    for (const raw of paths) {
      const path = safeAssetPath(raw);
      if (!path) continue;
      const key = assetKey(baseUuid, path);
      if (await this.storage.stat(key)) await this.storage.delete(key);
    }
  }

  /** A deleted base's files go with it. */
  removeBase(baseUuid: string): Promise<void> {
    return this.storage.deletePrefix(`${baseUuid}/`);
  }

  /** A copied base gets a copy of the files (same paths under the new base). */
  copyBase(fromUuid: string, toUuid: string): Promise<void> {
    return this.storage.copyPrefix(`${fromUuid}/`, `${toUuid}/`);
  }

  private async checkQuota(baseUuid: string, adding: number): Promise<void> {
    if (this.settings.quotaBytes === 0) return;
    if ((await this.usage(baseUuid)) + adding > this.settings.quotaBytes) {
      throw apiError(413, `Out of quota: the base's files may take ${this.settings.quotaBytes} bytes.`);
    }
  }

  /** The name to store under: the same (replacing) or the first free `name (n).ext`. */
  private async freeName(baseUuid: string, folder: string, name: string, replace: boolean): Promise<string> {
    if (replace) return name;
    for (let n = 0; n < 1000; n++) {
      const candidate = n === 0 ? name : numberedName(name, n);
      if (!(await this.storage.stat(assetKey(baseUuid, join(folder, candidate))))) return candidate;
    }
    throw conflict(`${name} already exists.`);
  }

  private async remove(baseUuid: string, path: string): Promise<void> {
    const key = assetKey(baseUuid, path);
    if (await this.storage.stat(key)) await this.storage.delete(key);
    else await this.storage.deletePrefix(`${key}/`);
  }
}

function join(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

function dirent(isFile: boolean, name: string, o: StoredObject): Dirent {
  return { is_file: isFile, obj_name: name, file_size: o.size, last_update: iso(o.modified) };
}

async function readAll(stream: Readable | null): Promise<Buffer> {
  if (!stream) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
