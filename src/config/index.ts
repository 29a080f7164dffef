export { loadConfig } from './load.js';
export { ConfigError } from './env.js';
export type { Config, Edition, Role } from './load.js';
export type { EventsNatsConfig } from './events-nats.js';
export type { OidcConfig } from './oidc.js';
