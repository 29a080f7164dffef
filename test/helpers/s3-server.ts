import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A real S3-compatible server process for the storage tests: s3rver (from npm; speaks the S3 REST
 * API over HTTP and keeps objects on disk), started as a child process. It is not MinIO or AWS:
 * docs/assets.md says what that leaves untested.
 */
export interface S3TestServer {
  env: Record<string, string>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

export async function startS3Server(bucket = 'basegate-assets'): Promise<S3TestServer> {
  const directory = mkdtempSync(path.join(tmpdir(), 'basegate-s3-'));
  const bin = path.join(path.dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
  const child = spawn(process.execPath, [bin, '-d', directory, '-a', '127.0.0.1', '-p', '0', '--configure-bucket', bucket], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('s3rver did not start within 20 s')), 20_000);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on [\d.]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`s3rver exited (${code}): ${output}`)));
  });
  return {
    env: {
      ASSET_STORAGE: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The storages every asset test runs on. */
export const STORAGES = ['local', 's3'] as const;
export type StorageKind = (typeof STORAGES)[number];

/** Env for a test app on `storage` (starting s3rver for `s3`); `close` stops what was started. */
export async function storageEnv(storage: StorageKind): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  if (storage === 'local') return { env: {}, close: async () => {} };
  return startS3Server();
}
