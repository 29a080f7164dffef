export { exportRoutes } from './export.routes.js';
export { safeText, cellValue } from './cell-text.js';
export { importRoutes } from './import.routes.js';
export { ImportService, IMPORT_BATCH } from './import.service.js';
export { archiveRoutes } from './archive.routes.js';
export { ArchiveService, ARCHIVE_FORMAT, ARCHIVE_VERSION } from './archive.service.js';
export { ImportJobs } from './import-jobs.js';
