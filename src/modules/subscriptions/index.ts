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
export type { CompiledSubscription, FireOn, MatchReason, MatchResult, Subscription, SubscriptionTable } from './subscription.js';
