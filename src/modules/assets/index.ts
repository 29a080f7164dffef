export { AssetsService } from './assets.service.js';
export type { AssetsSettings, BaseRef, ServedAsset } from './assets.service.js';
export { BaseGuard } from './base-guard.js';
export { assetsRoutes } from './assets.routes.js';
export { receiveUpload, discardUpload } from './receive-upload.js';
export type { ReceivedUpload, ReceivedFile } from './receive-upload.js';
export { useStreamingMultipart } from './streaming-multipart.js';
export { createAssets } from './assets.module.js';
export type { AssetsModule } from './assets.module.js';
