import path from 'node:path';
import { ConfigError, int, bool, type Env } from './env.js';

/** Where file and image cells keep their bytes, and how much they may hold (docs/assets.md). */
export interface AssetsConfig {
  /** ASSET_STORAGE — `local` (default: files under DATA_DIR/assets) or `s3`. */
  storage: 'local' | 's3';
  /** Local storage root: DATA_DIR/assets. Upload temp files go to DATA_DIR/tmp. */
  localDir: string;
  tmpDir: string;
  /** ASSET_MAX_BYTES — one upload (or one imported file); default 104857600 (100 MB). */
  maxBytes: number;
  /** ASSET_QUOTA_BYTES — all files of one base; 0 = unlimited; default 1073741824 (1 GB). */
  quotaBytes: number;
  /** ASSET_LINK_TTL_SECONDS — how long upload and download links stay valid; default 3600. */
  linkTtlSeconds: number;
  /** S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE (default true). */
  s3: { endpoint: string | null; bucket: string; region: string; accessKeyId: string | null; secretAccessKey: string | null; forcePathStyle: boolean } | null;
}

export function loadAssetsConfig(env: Env, dataDir: string): AssetsConfig {
  const storage = env.ASSET_STORAGE?.trim() || 'local';
  if (storage !== 'local' && storage !== 's3') throw new ConfigError('ASSET_STORAGE', 'must be local or s3');
  let s3: AssetsConfig['s3'] = null;
  if (storage === 's3') {
    const bucket = env.S3_BUCKET?.trim();
    if (!bucket) throw new ConfigError('S3_BUCKET', 'is required when ASSET_STORAGE=s3');
    const endpoint = env.S3_ENDPOINT?.trim() || null;
    if (endpoint !== null && !/^https?:\/\//.test(endpoint)) throw new ConfigError('S3_ENDPOINT', 'must start with http:// or https://');
    s3 = {
      endpoint,
      bucket,
      region: env.S3_REGION?.trim() || 'us-east-1',
      accessKeyId: env.S3_ACCESS_KEY_ID?.trim() || null,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY?.trim() || null,
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', true),
    };
  }
  return Object.freeze({
    storage,
    localDir: path.join(dataDir, 'assets'),
    tmpDir: path.join(dataDir, 'tmp'),
    maxBytes: int(env, 'ASSET_MAX_BYTES', 100 * 1024 * 1024, 1, 1024 ** 4),
    quotaBytes: int(env, 'ASSET_QUOTA_BYTES', 1024 ** 3, 0, 1024 ** 5),
    linkTtlSeconds: int(env, 'ASSET_LINK_TTL_SECONDS', 3600, 10, 7 * 86400),
    s3,
  });
}
