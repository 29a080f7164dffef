export { loadConfig } from './load.js';
export { ConfigError } from './env.js';
export type { Config, Edition, Role } from './load.js';
