export type { ChangeEvent, EventConsumer, NewChangeEvent, OpType, RowDataItem } from './events.types.js';
export { appendEvents, eventsAfter, ensureConsumer, lockConsumer, advanceConsumer, consumerPosition, pruneEvents } from './events.repository.js';
