export { BasesService, checkBaseName } from './bases.service.js';
export { SharesService } from './shares.service.js';
export type { ShareTarget } from './shares.service.js';
export { ExternalLinksService } from './external-links.service.js';
export type { LinkCheck } from './external-links.service.js';
export type { ExternalLinkRow } from './workspaces.repository.js';
export { baseRecord } from './workspaces.present.js';
export { workspacesRoutes } from './workspaces.routes.js';
