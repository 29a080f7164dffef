/**
 * Subscriptions: which committed changes a subscriber wants (tables, columns, operations, row
 * filters through the filter engine), decided in one pure place for webhooks and the change feed.
 */
export {
  compileSubscription,
  matchChange,
  mentionsSubscription,
  parseSubscription,
  presentSubscription,
  readSubscription,
  FIRE_ON,
  MATCH_MESSAGES,
  ROW_OPS,
  SUBSCRIPTION_FIELDS,
} from './subscription.js';
export { changeData } from './change-data.js';
export type { CompiledSubscription, FireOn, MatchReason, MatchResult, Subscription, SubscriptionTable } from './subscription.js';
export { ChangeFeed, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_MAX_WAIT_S } from './change-feed.js';
export type { ChangeFeedDeps, FeedPage } from './change-feed.js';
export { changeFeedRoutes } from './change-feed.routes.js';
export { CommitSignal } from './commit-signal.js';
export { formatCursor, parseCursor } from './cursor.js';
export type { Cursor } from './cursor.js';
