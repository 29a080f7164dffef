export { defaultMetadata, defaultMetadataJson } from './default-metadata.js';
export { rowsRoutes } from './rows.routes.js';
