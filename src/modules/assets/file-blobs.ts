import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assetKey } from './asset-paths.js';
import type { AssetStorage } from './storage.js';

/** A file of a base as a blob holds it. */
export interface KeptFile {
  path: string;
  sha256: string;
  size: number;
  modified: number;
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Content-addressed copies of base files in the asset storage (local disk or S3), under
 * `snapshot-blobs/<first two hex>/<sha256>`: outside every base's folder, so neither a base's listing
 * nor its deletion reaches them. The same bytes are stored once whatever the base, path or snapshot;
 * the history module records which snapshot holds which blob and deletes unreferenced ones.
 */
export class FileBlobs {
  constructor(
    private readonly storage: AssetStorage,
    private readonly tmpDir: string,
  ) {}

  static key(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('not a sha256');
    return `snapshot-blobs/${sha256.slice(0, 2)}/${sha256}`;
  }

  /**
   * Keeps the file at `filePath` of base `baseUuid`: null when there is none. `known` is how an earlier
   * snapshot kept the same path: when size and change time still match, the file is not read again.
   * Otherwise it is streamed once (hashed while copied to a temp file) and stored unless a blob with
   * its hash exists already.
   */
  async keep(baseUuid: string, filePath: string, known: KeptFile | undefined, blobExists: (sha: string) => Promise<boolean>): Promise<KeptFile | null> {
    const key = assetKey(baseUuid, filePath);
    const info = await this.storage.stat(key);
    if (!info) return null;
    // Whole milliseconds: what the database keeps (the local disk reports fractions).
    const modified = Math.floor(info.modified);
    if (known && known.size === info.size && known.modified === modified && (await blobExists(known.sha256))) return { ...known, path: filePath };
    const stream = await this.storage.open(key);
    if (!stream) return null;
    await mkdir(this.tmpDir, { recursive: true });
    const temp = path.join(this.tmpDir, `blob-${randomBytes(8).toString('hex')}`);
    try {
      const hash = createHash('sha256');
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      await pipeline(stream, createWriteStream(temp));
      const sha256 = hash.digest('hex');
      if (!(await blobExists(sha256)) || !(await this.storage.stat(FileBlobs.key(sha256)))) {
        await this.storage.putFile(FileBlobs.key(sha256), temp, 'application/octet-stream');
      }
      return { path: filePath, sha256, size, modified };
    } finally {
      await rm(temp, { force: true });
    }
  }

  open(sha256: string): Promise<Readable | null> {
    return this.storage.open(FileBlobs.key(sha256));
  }

  delete(sha256: string): Promise<void> {
    return this.storage.delete(FileBlobs.key(sha256));
  }
}
