import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3AssetStorage } from './s3-storage.js';

describe('S3 asset storage', () => {
  it('deletePrefix fails when the quiet DeleteObjects answer names keys it kept (a purge must run again)', async () => {
    const storage = new S3AssetStorage({ endpoint: 'http://127.0.0.1:9', bucket: 'b', region: 'us-east-1', accessKeyId: 'x', secretAccessKey: 'y', forcePathStyle: true });
    const deleted: string[] = [];
    // The bucket, without a network: two objects; the second one cannot be deleted.
    (storage as unknown as { client: { send: (command: unknown) => Promise<unknown> } }).client.send = async (command: unknown) => {
      if (command instanceof ListObjectsV2Command) return { Contents: [{ Key: 'base/a.txt', Size: 1 }, { Key: 'base/b.txt', Size: 1 }], IsTruncated: false };
      if (command instanceof DeleteObjectsCommand) {
        deleted.push(...(command.input.Delete?.Objects ?? []).map((o) => o.Key!).filter((k) => k !== 'base/b.txt'));
        return { Errors: [{ Key: 'base/b.txt', Code: 'AccessDenied' }] };
      }
      throw new Error('unexpected command');
    };
    await expect(storage.deletePrefix('base/')).rejects.toThrow(/kept 1 of 2 objects under base\/: base\/b\.txt \(AccessDenied\)/);
    expect(deleted).toEqual(['base/a.txt']);
  });
});
