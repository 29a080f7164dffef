import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { AssetsConfig } from '../../config/assets.js';
import type { AssetStorage, StoredObject } from './storage.js';

type S3Settings = NonNullable<AssetsConfig['s3']>;

/** Assets in an S3-compatible bucket under `<base uuid>/…`, shared by every instance. */
export class S3AssetStorage implements AssetStorage {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
        : {}),
      // Every wait has a bound (connect and each request).
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    });
  }

  async putFile(key: string, tempFile: string, contentType: string): Promise<void> {
    // lib-storage sends the file in parts; only a part or two is in memory at once.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: createReadStream(tempFile), ContentType: contentType },
      queueSize: 2,
    });
    await upload.done();
    await unlink(tempFile);
  }

  async open(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    try {
      const result = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      return result.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { key, size: head.ContentLength ?? 0, modified: head.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0, modified: o.LastModified?.getTime() ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async deletePrefix(prefix: string): Promise<void> {
    const keys = (await this.list(prefix)).map((o) => o.key);
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000).map((Key) => ({ Key }));
      // Quiet: the answer lists only the keys it could not delete, and does not fail for them.
      const answer = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch, Quiet: true } }));
      const failed = answer.Errors ?? [];
      if (failed.length > 0) throw new Error(`S3 kept ${failed.length} of ${batch.length} objects under ${prefix}: ${failed[0]!.Key} (${failed[0]!.Code ?? 'error'})`);
    }
  }

  async copyPrefix(from: string, to: string): Promise<void> {
    for (const o of await this.list(from)) await this.copy(o.key, to + o.key.slice(from.length));
  }

  async rename(from: string, to: string): Promise<void> {
    await this.copy(from, to);
    await this.delete(from);
  }

  close(): void {
    this.client.destroy();
  }

  private async copy(from: string, to: string): Promise<void> {
    const source = `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
    await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: source }));
  }
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
