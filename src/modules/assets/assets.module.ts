import type { Config } from '../../config/index.js';
import type { Clock } from '../../shared/clock.js';
import { AssetLinks } from './asset-links.js';
import { AssetsService } from './assets.service.js';
import { LocalAssetStorage } from './local-storage.js';
import { S3AssetStorage } from './s3-storage.js';
import type { AssetStorage } from './storage.js';

export interface AssetsModule {
  service: AssetsService;
  storage: AssetStorage;
}

/** The storage ASSET_STORAGE names and the service over it. */
export function createAssets(config: Config, clock: Clock): AssetsModule {
  const a = config.assets;
  const storage: AssetStorage = a.storage === 's3' && a.s3 ? new S3AssetStorage(a.s3) : new LocalAssetStorage(a.localDir);
  const links = new AssetLinks(config.secretKey, clock, a.linkTtlSeconds);
  const service = new AssetsService(storage, links, clock, { publicUrl: config.publicUrl, maxBytes: a.maxBytes, quotaBytes: a.quotaBytes });
  return { service, storage };
}
