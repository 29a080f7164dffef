export { createNatsStream, type NatsStream, type NatsStreamDeps } from './nats.module.js';
export { NatsEventConsumer, NATS_CONSUMER } from './nats.consumer.js';
export { changeBody, changeSubject } from './nats.message.js';
