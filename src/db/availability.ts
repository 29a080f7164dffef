import { sql } from 'kysely';
import type { Db } from './database.js';
import { databaseFault } from './faults.js';

/** True when the database answers a trivial query within `timeoutMs` (readiness). */
export async function isDatabaseReady(db: Db, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([sql`select 1`.execute(db).then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface WaitOptions {
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Stops waiting (a stop signal during start). */
  signal?: AbortSignal;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Wait until the database answers, retrying with exponential backoff (0.5 s doubling to 10 s)
 * and logging every failed attempt, so a server started before its database comes up waits for it
 * instead of exiting. Errors that are not a database fault (bad password, missing database) throw.
 */
export async function waitForDatabase(db: Db, options: WaitOptions): Promise<void> {
  let delay = options.firstDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`select 1`.execute(db);
      if (attempt > 1) options.log.info({ attempt }, 'database is reachable');
      return;
    } catch (error) {
      const fault = databaseFault(error);
      if (!fault) throw error;
      options.log.warn({ attempt, cause: fault.cause, retryInMs: delay }, 'database unreachable at start; retrying');
    }
    await sleep(delay, options.signal);
    delay = Math.min(delay * 2, options.maxDelayMs ?? 10_000);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
