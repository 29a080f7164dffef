export { exportRoutes } from './export.routes.js';
export { safeText, cellValue } from './cell-text.js';
