import { describe, expect, it } from 'vitest';
import { databaseFault } from './faults.js';

const err = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});

describe('databaseFault', () => {
  it.each([
    ['SQLITE_BUSY', 'database is locked', 503, /busy/],
    ['SQLITE_BUSY_SNAPSHOT', 'database is locked', 503, /busy/],
    ['SQLITE_PROTOCOL', 'locking protocol', 503, /busy/],
    ['SQLITE_SCHEMA', 'database schema has changed', 503, /busy/],
    ['SQLITE_NOMEM', 'out of memory', 503, /unavailable/],
    ['SQLITE_FULL', 'database or disk is full', 507, /space/],
    ['57P01', 'terminating connection due to administrator command', 503, /unavailable/],
    ['08006', 'connection failure', 503, /unavailable/],
    ['53300', 'too many connections', 503, /unavailable/],
    ['53100', 'could not extend file: No space left on device', 507, /space/],
    ['57014', 'canceling statement due to statement timeout', 503, /in time/],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432', 503, /unavailable/],
    [undefined, 'Connection terminated unexpectedly', 503, /unavailable/],
    [undefined, 'timeout exceeded when trying to connect', 503, /in time/],
    [undefined, 'Query read timeout', 503, /in time/],
  ])('%s (%s) → %i', (code, message, status, text) => {
    const fault = databaseFault(err(code, message));
    expect(fault).toMatchObject({ status, message: expect.stringMatching(text) });
    expect(fault!.retryAfter).toBeGreaterThan(0);
    expect(fault!.cause).toContain(message);
  });

  it('finds a fault in the cause chain', () => {
    expect(databaseFault(new Error('wrapped', { cause: err('SQLITE_FULL', 'database or disk is full') }))?.status).toBe(507);
  });

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed'],
    ['22P05', 'unsupported Unicode escape sequence'],
    ['28P01', 'password authentication failed'],
    [undefined, 'something else'],
  ])('leaves %s (%s) to the normal error path', (code, message) => {
    expect(databaseFault(err(code, message))).toBeNull();
  });
});
