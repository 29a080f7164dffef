export { createRealtime, SOCKET_IO_PATH } from './realtime.module.js';
export type { Realtime, RealtimeDeps } from './realtime.module.js';
export { toOperation, type Operation } from './operations.js';
