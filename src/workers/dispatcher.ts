// The dispatcher lives in the outbox module now; this path stays for existing imports.
export { Dispatcher, type DispatchReport, type DispatcherOptions } from '../modules/outbox/index.js';
