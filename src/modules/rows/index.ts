export { defaultMetadata, defaultMetadataJson } from './default-metadata.js';
export { rowsRoutes } from './routes.js';
export { createBaseData } from './base-data.js';
export type { BaseData } from './base-data.js';
export type { BaseMetadata, ColumnMeta, TableMeta, ViewMeta } from './metadata.js';
export type { StoredRow } from './present.js';
export { loadMetadata } from './metadata.repository.js';
export { ROW_LIMITS } from './rows.service.js';
