export type { CellColumn, ChangeEvent, NewChangeEvent, OpType, RowDataItem } from './events.types.js';
export type { BatchContext, OutboxConsumer, OutboxConsumerOptions, PartialBatch } from './outbox-consumer.js';
export {
  appendEvents,
  appendEventsTo,
  eventsAfter,
  eventsOfWrite,
  eventHeadsAfter,
  eventsOfBases,
  eventsOfBaseAfter,
  eventIdsBetween,
  ensureConsumer,
  lockConsumer,
  advanceConsumer,
  consumerPosition,
  consumerLag,
  pruneEvents,
  outboxPosition,
  outboxStats,
} from './events.repository.js';
export { cellsOfRow } from './event-cells.js';
export { EVENTS_COMMIT_LOCK, eventHorizon, eventHorizonSql, eventReadBound } from './events.repository.js';
export { appendStructureEvents, structureEventsAfter, structureEventsSince, pruneStructureEvents } from './structure-events.js';
export type { NewStructureEvent, StructureEvent } from './structure-events.js';
export { holdEvents, releaseHeldEvents, discardHeldEvents, heldInsertedRowIds, heldModifications } from './held-events.js';
