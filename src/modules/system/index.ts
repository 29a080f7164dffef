export { systemRoutes } from './system.routes.js';
export { healthRoutes } from './health.routes.js';
