/**
 * Database errors that are not the request's fault: the database is away, too slow, busy or full.
 * The error handler answers them with 503 (507 for a full disk) and `Retry-After` instead of a 500,
 * and logs the real cause.
 */
export interface DatabaseFault {
  status: 503 | 507;
  /** The client's `error_msg`. */
  message: string;
  /** What really happened, for the log (an engine code or a driver message). */
  cause: string;
  /** Seconds for `Retry-After`. */
  retryAfter: number;
}

const AWAY = 'The database is temporarily unavailable. Please retry later.';
const SLOW = 'The database did not answer in time. Please retry later.';
const BUSY = 'The database is busy. Please retry later.';
const FULL = 'The database has no space left; nothing was changed.';

/** Node socket errors of a lost or unreachable database server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Messages of node-postgres (pg, pg-pool) when a connection is lost, refused or timed out. */
const PG_DRIVER_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Client was closed|Connection ended|connection timeout/i;

/** Classify `error` (or an error in its `cause` chain); null when it is not a database fault. */
export function databaseFault(error: unknown): DatabaseFault | null {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const fault = classify(e as { code?: unknown; message?: unknown });
    if (fault) return fault;
  }
  return null;
}

function classify(e: { code?: unknown; message?: unknown }): DatabaseFault | null {
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const cause = code ? `${code}: ${message}` : message;
  if (code.startsWith('SQLITE_')) {
    if (code === 'SQLITE_FULL') return { status: 507, message: FULL, cause, retryAfter: 60 };
    // PROTOCOL: the WAL index lock stayed contended through SQLite's own retries; SCHEMA: a statement
    // kept being re-prepared because other connections changed the schema (run-time index builds). Both pass.
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_PROTOCOL' || code === 'SQLITE_SCHEMA') {
      return { status: 503, message: BUSY, cause, retryAfter: 1 };
    }
    // INTERRUPT: a read stopped at its time limit (a listing on a reader thread, rows/thread-reads.ts).
    if (code === 'SQLITE_INTERRUPT') return { status: 503, message: SLOW, cause, retryAfter: 5 };
    if (code === 'SQLITE_NOMEM') return { status: 503, message: AWAY, cause, retryAfter: 5 };
    if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN') return { status: 503, message: AWAY, cause, retryAfter: 5 };
    return null;
  }
  // PostgreSQL SQLSTATEs: 08 connection exception, 57P0x the server is shutting down or the
  // backend was terminated, 53 insufficient resources, 57014 statement timeout, 55P03 lock timeout.
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (code === '53100') return { status: 507, message: FULL, cause, retryAfter: 60 };
    if (code.startsWith('08') || /^57P0[1-3]$/.test(code) || code.startsWith('53')) return { status: 503, message: AWAY, cause, retryAfter: 2 };
    if (code === '57014' || code === '55P03') return { status: 503, message: SLOW, cause, retryAfter: 5 };
    if (code === '40P01' || code === '40001') return { status: 503, message: BUSY, cause, retryAfter: 1 };
    return null;
  }
  if (NETWORK_CODES.has(code)) return { status: 503, message: AWAY, cause, retryAfter: 2 };
  if (PG_DRIVER_MESSAGES.test(message)) {
    return { status: 503, message: /timeout/i.test(message) ? SLOW : AWAY, cause, retryAfter: 2 };
  }
  return null;
}
