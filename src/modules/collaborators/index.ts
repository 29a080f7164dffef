export { CollaboratorsService, relatedUserRecord } from './collaborators.service.js';
export type { RelatedUser } from './collaborators.service.js';
export { collaboratorsRoutes } from './collaborators.routes.js';
export { relatedUsers } from './collaborators.repository.js';
