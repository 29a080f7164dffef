import { createReadStream } from 'node:fs';
import { copyFile, cp, mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { AssetStorage, StoredObject } from './storage.js';

/** Assets as files under DATA_DIR/assets/<base uuid>/… */
export class LocalAssetStorage implements AssetStorage {
  constructor(private readonly root: string) {}

  async putFile(key: string, tempFile: string): Promise<void> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(tempFile, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(tempFile, target);
      await unlink(tempFile);
    }
  }

  async open(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const file = this.file(key);
    if (!(await isFile(file))) return null;
    return createReadStream(file, range);
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const s = await stat(this.file(key));
      return s.isFile() ? { key, size: s.size, modified: s.mtimeMs } : null;
    } catch {
      return null;
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const dir = this.file(prefix.replace(/\/+$/, ''));
    const out: StoredObject[] = [];
    let entries;
    try {
      entries = await readdir(dir, { recursive: true, withFileTypes: true });
    } catch {
      return out;
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      const s = await stat(full);
      out.push({ key: path.relative(this.root, full).split(path.sep).join('/'), size: s.size, modified: s.mtimeMs });
    }
    return out;
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.file(prefix.replace(/\/+$/, '')), { recursive: true, force: true });
  }

  async copyPrefix(from: string, to: string): Promise<void> {
    const source = this.file(from.replace(/\/+$/, ''));
    if (!(await exists(source))) return;
    await cp(source, this.file(to.replace(/\/+$/, '')), { recursive: true });
  }

  async rename(from: string, to: string): Promise<void> {
    const target = this.file(to);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(this.file(from), target);
  }

  close(): void {}

  /** The file of a key; a key that would leave the root is a programming error (keys are checked before). */
  private file(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error('asset key outside the storage root');
    return full;
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
