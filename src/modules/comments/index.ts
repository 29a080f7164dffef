import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import { commentsRoutes } from './comments.routes.js';
import { CommentsService, type Notify } from './comments.service.js';

export { CommentsService, MSG_TYPE_COMMENT, mentionedAddresses } from './comments.service.js';

export interface CommentsDeps {
  db: Db;
  clock: Clock;
  access: BaseAccess;
  /** The notifications module's `notifyUser` (container-bound): mentions land in the inbox. */
  notify: Notify;
}

/** Row comments: the routes plugin for src/app.ts. */
export function createCommentsRoutes(deps: CommentsDeps): FastifyPluginAsyncTypebox {
  return commentsRoutes({ comments: new CommentsService(deps.db, deps.clock, deps.notify), access: deps.access });
}
export { listComments } from './comments.repository.js';
export { countRowComments, deleteBaseComments, deleteTableComments } from './comments.repository.js';
