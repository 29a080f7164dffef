export type { ChangeEvent, ConsumerContext, EventConsumer, NewChangeEvent, OpType, RowDataItem } from './events.types.js';
export {
  appendEvents,
  eventsAfter,
  eventHeadsAfter,
  eventsOfBases,
  ensureConsumer,
  lockConsumer,
  advanceConsumer,
  consumerPosition,
  pruneEvents,
  outboxPosition,
  outboxStats,
} from './events.repository.js';
