import { ConfigError, int, optional, str, type Env } from './env.js';

/** The stream of changes to NATS JetStream (docs/nats.md); absent unless EVENTS_NATS_URL is set. */
export interface EventsNatsConfig {
  /** EVENTS_NATS_URL — `nats://host:port` (comma-separated for a cluster). */
  url: string;
  /** EVENTS_NATS_STREAM — the JetStream stream, created if missing; default `BASEGATE_EVENTS`. */
  stream: string;
  /** EVENTS_NATS_SUBJECT_PREFIX — subjects are `<prefix>.<base_uuid>.<table_id>.<op>`; default `basegate`. */
  subjectPrefix: string;
  /** EVENTS_NATS_TIMEOUT_MS — a connect or one publish acknowledgement must arrive within this; default 5000. */
  timeoutMs: number;
}

export function loadEventsNatsConfig(env: Env): EventsNatsConfig | null {
  const url = optional(env, 'EVENTS_NATS_URL');
  if (url === null) return null;
  for (const server of url.split(',')) {
    if (!/^(nats|tls):\/\/[^\s/]+$/.test(server.trim())) throw new ConfigError('EVENTS_NATS_URL', 'must be nats://host:port (or tls://), comma-separated for several servers');
  }
  const stream = str(env, 'EVENTS_NATS_STREAM', 'BASEGATE_EVENTS');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream)) throw new ConfigError('EVENTS_NATS_STREAM', 'must be 1 to 64 letters, digits, _ or -');
  const subjectPrefix = str(env, 'EVENTS_NATS_SUBJECT_PREFIX', 'basegate');
  if (!/^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$/.test(subjectPrefix)) {
    throw new ConfigError('EVENTS_NATS_SUBJECT_PREFIX', 'must be subject tokens (letters, digits, _ or -) separated by dots, no wildcards');
  }
  return { url, stream, subjectPrefix, timeoutMs: int(env, 'EVENTS_NATS_TIMEOUT_MS', 5000, 100, 120_000) };
}
