import { ConfigError, int } from './env.js';

type Env = Record<string, string | undefined>;

/** Resource bounds and hardening switches (issue 17); each field names its environment variable. See docs/security.md. */
export interface SecurityConfig {
  /** SQL_MAX_STATEMENT_BYTES — a statement longer than this is refused before parsing; default 65536. */
  sqlMaxStatementBytes: number;
  /** SQL_MAX_PREDICATE_TERMS — comparisons and AND/OR/NOT terms in one statement; default 1000. */
  sqlMaxPredicateTerms: number;
  /** SQL_MAX_IN_VALUES — values in one statement's IN lists, all lists together; default 1000. */
  sqlMaxInValues: number;
  /** SQL_TIMEOUT_MS — time limit of one SQL query (PostgreSQL statement_timeout; SQLite reader threads); default 10000. */
  sqlTimeoutMs: number;
  /** SQL_READER_THREADS — SQLite: threads running SELECTs off the main thread (0 = on the main thread); default 2. */
  sqlReaderThreads: number;
  /** FORMULA_BATCH_TIMEOUT_MS — time limit of one batch of formula cells (a write's rows, 1,000 rows of a recompute); cells unevaluated at the limit become errors; default 10000. */
  formulaBatchTimeoutMs: number;
  /** FORMULA_THREADS — threads computing large formula batches off the main thread (0 = on the main thread); default 2. */
  formulaThreads: number;
  /** CELL_MAX_BYTES — one cell's value as JSON; default 1048576 (1 MB). */
  cellMaxBytes: number;
  /** COLUMN_DATA_MAX_BYTES — a column's `data` or a view's settings as JSON; default 65536. */
  columnDataMaxBytes: number;
  /** BASE_METADATA_MAX_BYTES — a base's structure (tables, columns, views) as JSON; default 4194304 (4 MB). */
  baseMetadataMaxBytes: number;
  /** BASE_READ_MAX_BYTES — the whole-base read (`GET …/dtables/{uuid}/`) answers 400 above this; default 268435456 (256 MB). */
  baseReadMaxBytes: number;
  /** LOGIN_FAILURES_BEFORE_DELAY — wrong passwords per IP and per account (or link) before back-off starts; default 5. */
  loginFailuresBeforeDelay: number;
  /** LOGIN_MAX_DELAY_SECONDS — the back-off doubles from 1 s up to this; default 900. */
  loginMaxDelaySeconds: number;
  /** TWO_FACTOR_DEVICE_REMEMBER_DAYS — a device trusted at a two-factor sign-in (`X-SEAFILE-2FA-TRUST-DEVICE: 1`) skips the code this long; 0 trusts none; default 90 (the original's). */
  twoFactorDeviceRememberDays: number;
  /** METRICS_TOKEN — when set, /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | null;
}

export function loadSecurityConfig(env: Env): SecurityConfig {
  const metricsToken = env.METRICS_TOKEN?.trim() || null;
  if (metricsToken !== null && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
  return Object.freeze({
    sqlMaxStatementBytes: int(env, 'SQL_MAX_STATEMENT_BYTES', 65_536, 1024, 1_000_000),
    sqlMaxPredicateTerms: int(env, 'SQL_MAX_PREDICATE_TERMS', 1000, 1, 100_000),
    sqlMaxInValues: int(env, 'SQL_MAX_IN_VALUES', 1000, 1, 30_000),
    sqlTimeoutMs: int(env, 'SQL_TIMEOUT_MS', 10_000, 1, 600_000),
    sqlReaderThreads: int(env, 'SQL_READER_THREADS', 2, 0, 64),
    formulaBatchTimeoutMs: int(env, 'FORMULA_BATCH_TIMEOUT_MS', 10_000, 1, 600_000),
    formulaThreads: int(env, 'FORMULA_THREADS', 2, 0, 64),
    cellMaxBytes: int(env, 'CELL_MAX_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    columnDataMaxBytes: int(env, 'COLUMN_DATA_MAX_BYTES', 65_536, 1024, 16 * 1024 * 1024),
    baseMetadataMaxBytes: int(env, 'BASE_METADATA_MAX_BYTES', 4 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024),
    baseReadMaxBytes: int(env, 'BASE_READ_MAX_BYTES', 256 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),
    loginFailuresBeforeDelay: int(env, 'LOGIN_FAILURES_BEFORE_DELAY', 5, 1, 1000),
    loginMaxDelaySeconds: int(env, 'LOGIN_MAX_DELAY_SECONDS', 900, 1, 86_400),
    twoFactorDeviceRememberDays: int(env, 'TWO_FACTOR_DEVICE_REMEMBER_DAYS', 90, 0, 365),
    metricsToken,
  });
}
