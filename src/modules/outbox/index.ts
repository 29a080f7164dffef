export { Dispatcher, type DispatchReport, type DispatcherOptions } from './dispatcher.js';
export type { BatchContext, OutboxConsumer, OutboxConsumerOptions, PartialBatch } from '../events/index.js';
