export { loadConfig, ConfigError } from './load.js';
export type { Config, Edition, Role } from './load.js';
