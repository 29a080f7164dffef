import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError, bool, int, optional, str, type Env } from './env.js';
import { loadSecurityConfig, type SecurityConfig } from './security.js';
import { loadAssetsConfig, type AssetsConfig } from './assets.js';
import { loadEventsNatsConfig, type EventsNatsConfig } from './events-nats.js';
import { loadAutomationsConfig, type AutomationsConfig } from './automations.js';
import { loadOidcConfig, type OidcConfig } from './oidc.js';

export type Edition = 'self-hosted' | 'cloud';
export type Role = 'api' | 'worker' | 'scheduler';

/** The validated, frozen configuration. Each field names the environment variable it comes from. */
export interface Config {
  /** PORT — TCP port to listen on. */
  port: number;
  /** HOST — interface to bind. */
  host: string;
  /** PUBLIC_URL — how clients reach this server; used in responses that carry server URLs. No trailing slash. */
  publicUrl: string;
  /** DATA_DIR — SQLite file, generated secret key, mail spool. */
  dataDir: string;
  /** DATABASE_URL — `postgres://…` for PostgreSQL; `sqlite:<path>` or unset for the embedded SQLite file. */
  databaseUrl: string | null;
  /** REDIS_URL — shared rate-limit counters and cross-instance invalidation. */
  redisUrl: string | null;
  /** ADMIN_EMAIL / ADMIN_PASSWORD — the admin created on first start when there are no users. */
  adminEmail: string;
  adminPassword: string | null;
  /** SECRET_KEY — signs Base-Tokens and temporary API-Tokens. */
  secretKey: string;
  /** LOG_LEVEL — pino level. */
  logLevel: string;
  /** HEAP_GROWING_PERCENT — V8 collects its old generation once it has grown this much past what the last full collection kept; 0 = V8's own factor (up to 4×); default 50. */
  heapGrowingPercent: number;
  /** EDITION — `self-hosted` (default) or `cloud`; selects rate-limit defaults. */
  edition: Edition;
  /** BODY_LIMIT_BYTES — request body limit for account operations. */
  bodyLimitBytes: number;
  /** BASE_BODY_LIMIT_BYTES — request body limit for base operations (row batches are large). */
  baseBodyLimitBytes: number;
  /** BODY_MAX_OBJECT_KEYS — keys in one object of a JSON body, checked before parsing. */
  bodyMaxObjectKeys: number;
  /** TRUST_PROXY — honour X-Forwarded-For for the client IP. */
  trustProxy: boolean;
  /** RATE_LIMIT_ACCOUNT_PER_MINUTE — `/api/v2.1/*`, `/api2/*`; 0 = unlimited; default 3000 (cloud 1000). */
  rateLimitAccountPerMinute: number;
  /** RATE_LIMIT_BASE_PER_MINUTE — `/api-gateway/*`, per base; 0 = unlimited; default 500 (cloud 200). */
  rateLimitBasePerMinute: number;
  /** RATE_LIMIT_AUTH_TOKEN_PER_MINUTE — `/api2/auth-token/`; 0 = unlimited; default unlimited (cloud 60). */
  rateLimitAuthTokenPerMinute: number;
  /** TIME_ZONE — IANA zone of deadline reminders (`notify_hour`, "today") and of date cells (docs/base-data.md#dates); default UTC. */
  timeZone: string;
  /** NOTIFICATION_EMAIL_DELAY_MINUTES — an unread notification is e-mailed after this long; default 120. */
  notificationEmailDelayMinutes: number;
  /** NOTIFICATION_DEDUP_MINUTES — one notification per rule and row within this window; default 5, 0 = off. */
  notificationDedupMinutes: number;
  /** SMTP_URL — `smtp://user:pass@host:port` or `smtps://…`; without it mails are written under DATA_DIR/mail/. */
  smtpUrl: string | null;
  /** MAIL_FROM — sender address of notification e-mails. */
  mailFrom: string;
  /** WEBHOOK_TIMEOUT_MS — one delivery attempt (connect + response) must finish within this; default 15000. */
  webhookTimeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE — allow deliveries to loopback/private/link-local/metadata addresses; default false. */
  webhookAllowPrivate: boolean;
  /** WEBHOOK_RETRY_SCHEDULE — delays before each retry, e.g. `5s,5m,30m,2h,5h,10h,10h` (the default). */
  webhookRetrySchedule: readonly number[];
  /** WEBHOOK_RETENTION_DAYS — finished deliveries are kept this long in the delivery log; default 30. */
  webhookRetentionDays: number;
  /** Days the operation log keeps an operation (OPERATION_LOG_RETENTION_DAYS; 0 turns the log off). */
  operationLogRetentionDays: number;
  /** AUDIT_LOG_RETENTION_DAYS — the audit log keeps a row this long (0: forever); default 365. */
  auditLogRetentionDays: number;
  /** GROUP_MAX_MEMBERS — members a group may have, its owner included; default 500. */
  groupMaxMembers: number;
  /** TRASH_RETENTION_DAYS — a deleted base stays restorable from the trash this long, then is purged; default 30. */
  trashRetentionDays: number;
  /** CHANGE_FEED_RETENTION_DAYS — committed changes stay readable by the change feed (and replayable) this long; default 7. */
  changeFeedRetentionDays: number;
  /** WEBHOOK_CONCURRENCY — deliveries one worker sends at once (slots shared round robin between webhooks); default 512 (16 webhooks at the default 32 lanes). */
  webhookConcurrency: number;
  /** DATABASE_CONNECT_TIMEOUT_MS — longest wait for a database connection (PostgreSQL connect or pool slot, SQLite lock); default 5000. */
  databaseConnectTimeoutMs: number;
  /** DATABASE_STATEMENT_TIMEOUT_MS — longest a statement may run or wait for an answer; default 30000. */
  databaseStatementTimeoutMs: number;
  /** SHUTDOWN_TIMEOUT_MS — a stop that takes longer ends in a forced exit; default connect + statement timeout + 10 s. */
  shutdownTimeoutMs: number;
  /** REQUEST_TIMEOUT_MS — a client must send its whole request (headers and body) within this; default 30000. */
  requestTimeoutMs: number;
  /**
   * PG_CONCURRENT_APPENDS — PostgreSQL: appends of new rows of one base commit side by side (revision
   * stripes, event ids drawn in blocks, readers bounded by the event horizon; docs/architecture.md);
   * off: they commit one statement after another, as updates do. Ignored on SQLite. Default off.
   */
  pgConcurrentAppends: boolean;
  /**
   * PG_PARALLEL_WORKERS — PostgreSQL: `max_parallel_workers_per_gather` on basegate's connections; default 0.
   * A request's statement runs on one core: a parallel plan started two workers for a 100-row page the
   * planner misjudged (780 ms instead of 0.5 ms at 1,000,000 rows), and one tenant's scan would take
   * every core. Index builds are not affected (`max_parallel_maintenance_workers`).
   */
  pgParallelWorkers: number;
  /** PG_JIT — PostgreSQL: `jit` on basegate's connections; default off (it compiled 40–50 ms into 100-row pages of big tables). */
  pgJit: boolean;
  /** WEBHOOK_LANES — deliveries of ONE webhook in flight at once, for different rows (a row's deliveries stay in order); 1 = strict order; default 32. */
  webhookLanes: number;
  /** WEBHOOK_WORKER_STALE_MS — PostgreSQL: a delivery worker silent this long is dead and its leases are taken over (it beats every third of it); default 3000. */
  webhookWorkerStaleMs: number;
  /** REALTIME_MAX_CONNECTIONS_PER_USER — live (socket.io) connections one credential may hold per instance; default 50. */
  realtimeMaxConnectionsPerUser: number;
  /** REALTIME_MAX_CONNECTIONS_PER_IP — live connections from one client address per instance; default 200. */
  realtimeMaxConnectionsPerIp: number;
  /** REALTIME_RECOVERY_SECONDS — a client reconnecting within this window resumes where it left off; default 300. */
  realtimeRecoverySeconds: number;
  /** REALTIME_MAX_BUFFERED_PACKETS — a client with more packets waiting to be sent is dropped; default 1000. */
  realtimeMaxBufferedPackets: number;
  /** REALTIME_MAX_BUFFERED_BYTES — a client with more bytes waiting to be sent is dropped at once; default 16 MiB. */
  realtimeMaxBufferedBytes: number;
  /** REALTIME_RECOVERY_BUFFER_BYTES — the broadcasts kept for connection-state recovery (in memory, without Redis), oldest dropped first; default 64 MiB. */
  realtimeRecoveryBufferBytes: number;
  /** REALTIME_JOINS_PER_MINUTE — `join-room` calls one socket may make per minute; more are refused and the socket dropped; default 60. */
  realtimeJoinsPerMinute: number;
  /** REALTIME_RECOVERY_BASE_BYTES — of those, the most one base (room) keeps, oldest dropped first; default 8 MiB. */
  realtimeRecoveryBaseBytes: number;
  /** REALTIME_RECOVERY_BASE_MESSAGES — the most broadcasts one base (room) keeps for recovery; default 10,000. */
  realtimeRecoveryBaseMessages: number;
  /** REALTIME_MAX_OPERATION_BYTES — an `update-dtable` operation longer than this is sent as a small `dtable-changed` (re-read); default 256 KiB. */
  realtimeMaxOperationBytes: number;
  /** Resource bounds and hardening (SQL_*, CELL_MAX_BYTES, LOGIN_*, METRICS_*): see `src/config/security.ts`. */
  security: SecurityConfig;
  /** WEBHOOK_MAX_PER_BASE — webhooks one base may have; creating one more answers 400; default 20. */
  webhookMaxPerBase: number;
  /** WEBHOOK_MAX_BACKLOG — queued deliveries one webhook may have; past it the webhook is paused and its owner told; default 10000. */
  webhookMaxBacklog: number;
  /** WEBHOOK_REPLAY_MAX — deliveries one replay or bulk-redeliver call may queue; more answers 400; default 1000. */
  webhookReplayMax: number;
  /** File and image storage (ASSET_*, S3_*): see `src/config/assets.ts`. */
  assets: AssetsConfig;
  /** The change stream to NATS JetStream (EVENTS_NATS_*): see `src/config/events-nats.ts`; null without EVENTS_NATS_URL. */
  eventsNats: EventsNatsConfig | null;
  /** Automation rules' limits (AUTOMATION_*): see `src/config/automations.ts`. */
  automations: AutomationsConfig;
  /** OpenID Connect sign-in (OIDC_*): see `src/config/oidc.ts`; null without OIDC_ISSUER. */
  oidc: OidcConfig | null;
}

/** Upper bound of the RATE_LIMIT_* variables (per minute). */
const MAX_RATE = 10_000_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Read and validate the environment. A bad value throws ConfigError naming the variable.
 * `options.persistSecret` (default true) writes a generated SECRET_KEY under DATA_DIR so restarts
 * keep issued tokens valid.
 */
export function loadConfig(env: Env = process.env, options: { persistSecret?: boolean } = {}): Config {
  const port = int(env, 'PORT', 8000, 0, 65535);
  const host = str(env, 'HOST', '127.0.0.1');
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  const publicUrl = url(env, 'PUBLIC_URL', `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl && !/^(postgres(ql)?:\/\/|sqlite:)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres://, postgresql:// or sqlite:');
  }
  // In memory, everything is lost at exit, and each SQL query would copy the whole database (docs/security.md).
  if (databaseUrl && /^sqlite:(:memory:)?$/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must name a SQLite file (sqlite:/path/file.sqlite3); an in-memory database is for tests only');
  }
  const redisUrl = optional(env, 'REDIS_URL');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://');
  }
  const adminEmail = str(env, 'ADMIN_EMAIL', 'admin@example.com');
  if (!/^[^\s@]+@[^\s@]+$/.test(adminEmail)) throw new ConfigError('ADMIN_EMAIL', 'must be an e-mail address');
  const adminPassword = optional(env, 'ADMIN_PASSWORD');
  if (adminPassword !== null && adminPassword.length < 8) {
    throw new ConfigError('ADMIN_PASSWORD', 'must be at least 8 characters');
  }
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const edition = str(env, 'EDITION', 'self-hosted');
  if (edition !== 'self-hosted' && edition !== 'cloud') {
    throw new ConfigError('EDITION', 'must be self-hosted or cloud');
  }
  const secretKey = optional(env, 'SECRET_KEY') ?? secretFromDataDir(dataDir, options.persistSecret ?? true);
  if (secretKey.length < 32) throw new ConfigError('SECRET_KEY', 'must be at least 32 characters');

  return Object.freeze({
    port,
    host,
    publicUrl,
    dataDir,
    databaseUrl,
    redisUrl,
    adminEmail,
    adminPassword,
    secretKey,
    logLevel,
    heapGrowingPercent: int(env, 'HEAP_GROWING_PERCENT', 50, 0, 1000),
    edition,
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    baseBodyLimitBytes: int(env, 'BASE_BODY_LIMIT_BYTES', 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    bodyMaxObjectKeys: int(env, 'BODY_MAX_OBJECT_KEYS', 10_000, 100, 10_000_000),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    rateLimitAccountPerMinute: int(env, 'RATE_LIMIT_ACCOUNT_PER_MINUTE', edition === 'cloud' ? 1000 : 3000, 0, MAX_RATE),
    rateLimitBasePerMinute: int(env, 'RATE_LIMIT_BASE_PER_MINUTE', edition === 'cloud' ? 200 : 500, 0, MAX_RATE),
    rateLimitAuthTokenPerMinute: int(env, 'RATE_LIMIT_AUTH_TOKEN_PER_MINUTE', edition === 'cloud' ? 60 : 0, 0, MAX_RATE),
    timeZone: timeZone(env, 'TIME_ZONE'),
    notificationEmailDelayMinutes: int(env, 'NOTIFICATION_EMAIL_DELAY_MINUTES', 120, 0, 525_600),
    notificationDedupMinutes: int(env, 'NOTIFICATION_DEDUP_MINUTES', 5, 0, 10_080),
    smtpUrl: smtpUrl(env, 'SMTP_URL'),
    mailFrom: mailFrom(env, 'MAIL_FROM'),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 300_000),
    webhookAllowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookRetrySchedule: Object.freeze(durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h')),
    webhookRetentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    operationLogRetentionDays: int(env, 'OPERATION_LOG_RETENTION_DAYS', 180, 0, 36500),
    auditLogRetentionDays: int(env, 'AUDIT_LOG_RETENTION_DAYS', 365, 0, 36500),
    trashRetentionDays: int(env, 'TRASH_RETENTION_DAYS', 30, 0, 3650),
    groupMaxMembers: int(env, 'GROUP_MAX_MEMBERS', 500, 1, 100_000),
    changeFeedRetentionDays: int(env, 'CHANGE_FEED_RETENTION_DAYS', 7, 1, 3650),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 512, 1, 1024),
    ...faultLimits(env),
    webhookLanes: int(env, 'WEBHOOK_LANES', 32, 1, 64),
    pgConcurrentAppends: bool(env, 'PG_CONCURRENT_APPENDS', false),
    pgParallelWorkers: int(env, 'PG_PARALLEL_WORKERS', 0, 0, 64),
    pgJit: bool(env, 'PG_JIT', false),
    realtimeMaxConnectionsPerUser: int(env, 'REALTIME_MAX_CONNECTIONS_PER_USER', 50, 1, 100_000),
    realtimeMaxConnectionsPerIp: int(env, 'REALTIME_MAX_CONNECTIONS_PER_IP', 200, 1, 1_000_000),
    realtimeRecoverySeconds: int(env, 'REALTIME_RECOVERY_SECONDS', 300, 0, 3600),
    realtimeMaxBufferedPackets: int(env, 'REALTIME_MAX_BUFFERED_PACKETS', 1000, 10, 1_000_000),
    realtimeMaxBufferedBytes: int(env, 'REALTIME_MAX_BUFFERED_BYTES', 16 * 2 ** 20, 64 * 1024, 2 ** 30),
    realtimeRecoveryBufferBytes: int(env, 'REALTIME_RECOVERY_BUFFER_BYTES', 64 * 2 ** 20, 0, 2 ** 32),
    realtimeJoinsPerMinute: int(env, 'REALTIME_JOINS_PER_MINUTE', 60, 1, 100_000),
    realtimeRecoveryBaseBytes: int(env, 'REALTIME_RECOVERY_BASE_BYTES', 8 * 2 ** 20, 0, 2 ** 32),
    realtimeRecoveryBaseMessages: int(env, 'REALTIME_RECOVERY_BASE_MESSAGES', 10_000, 0, 10_000_000),
    realtimeMaxOperationBytes: int(env, 'REALTIME_MAX_OPERATION_BYTES', 256 * 1024, 1024, 2 ** 30),
    security: loadSecurityConfig(env),
    webhookMaxPerBase: int(env, 'WEBHOOK_MAX_PER_BASE', 20, 1, 1000),
    webhookMaxBacklog: int(env, 'WEBHOOK_MAX_BACKLOG', 10_000, 10, 10_000_000),
    webhookReplayMax: int(env, 'WEBHOOK_REPLAY_MAX', 1_000, 1, 100_000),
    webhookWorkerStaleMs: int(env, 'WEBHOOK_WORKER_STALE_MS', 3_000, 1_000, 600_000),
    assets: loadAssetsConfig(env, dataDir),
    eventsNats: loadEventsNatsConfig(env),
    automations: loadAutomationsConfig(env, durations(env, 'AUTOMATION_RETRY_SCHEDULE', '30s,5m,30m,2h')),
    oidc: loadOidcConfig(env),
  });
}

/** Bounded waits for the database, the stop deadline (longer than any of them) and the request timeout. */
function faultLimits(env: Env) {
  const databaseConnectTimeoutMs = int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000);
  const databaseStatementTimeoutMs = int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000);
  const longestWait = databaseConnectTimeoutMs + databaseStatementTimeoutMs;
  const shutdownTimeoutMs = int(env, 'SHUTDOWN_TIMEOUT_MS', longestWait + 10_000, 1_000, 4_000_000);
  if (shutdownTimeoutMs <= longestWait) {
    throw new ConfigError('SHUTDOWN_TIMEOUT_MS', `must be longer than DATABASE_CONNECT_TIMEOUT_MS + DATABASE_STATEMENT_TIMEOUT_MS (${longestWait})`);
  }
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000);
  return { databaseConnectTimeoutMs, databaseStatementTimeoutMs, shutdownTimeoutMs, requestTimeoutMs };
}

function secretFromDataDir(dataDir: string, persist: boolean): string {
  const file = path.join(dataDir, 'secret_key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const generated = randomBytes(32).toString('hex');
  if (persist) {
    // Only its owner may read DATA_DIR (the secret key, the SQLite file, the mail spool).
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' });
  }
  return generated;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A comma-separated list of durations (`500ms`, `5s`, `5m`, `2h`, `1d`; empty list allowed) in ms. */
function durations(env: Env, name: string, fallback: string): number[] {
  const raw = env[name] === undefined ? fallback : env[name]!.trim();
  if (raw === '') return [];
  return raw.split(',').map((part) => {
    const match = /^(\d{1,7})(ms|s|m|h|d)$/.exec(part.trim());
    const value = match ? Number(match[1]) * DURATION_UNITS[match[2]!]! : NaN;
    if (!match || value > 7 * 86_400_000) {
      throw new ConfigError(name, `must be durations like 5s,5m,2h (each at most 7d), got "${raw}"`);
    }
    return value;
  });
}

function timeZone(env: Env, name: string): string {
  const raw = optional(env, name) ?? 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw new ConfigError(name, `must be an IANA time zone such as Europe/Berlin, got "${raw}"`);
  }
}

function smtpUrl(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  if (!/^smtps?:\/\/[^/\s]+/.test(raw)) throw new ConfigError(name, 'must start with smtp:// or smtps://');
  return raw;
}

function mailFrom(env: Env, name: string): string {
  const raw = optional(env, name) ?? 'basegate <no-reply@localhost>';
  if (!/[^\s@<]+@[^\s@>]+/.test(raw)) throw new ConfigError(name, `must contain an e-mail address, got "${raw}"`);
  return raw;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}
