import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';

const base = { SECRET_KEY: 'k'.repeat(40), DATA_DIR: '/tmp/basegate-config-test' };

describe('database waits, stop deadline and request timeout', () => {
  it('defaults: 5 s connect, 30 s statement, a stop deadline longer than both, 30 s request', () => {
    const c = loadConfig(base, { persistSecret: false });
    expect(c.databaseConnectTimeoutMs).toBe(5_000);
    expect(c.databaseStatementTimeoutMs).toBe(30_000);
    expect(c.shutdownTimeoutMs).toBe(45_000);
    expect(c.requestTimeoutMs).toBe(30_000);
  });

  it('derives the stop deadline from the waits', () => {
    const c = loadConfig({ ...base, DATABASE_CONNECT_TIMEOUT_MS: '1000', DATABASE_STATEMENT_TIMEOUT_MS: '2000' }, { persistSecret: false });
    expect(c.shutdownTimeoutMs).toBe(13_000);
  });

  it('refuses a stop deadline not longer than the longest database wait, and bad numbers', () => {
    expect(() => loadConfig({ ...base, SHUTDOWN_TIMEOUT_MS: '35000' }, { persistSecret: false })).toThrow(/SHUTDOWN_TIMEOUT_MS must be longer/);
    expect(() => loadConfig({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: 'soon' }, { persistSecret: false })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig({ ...base, REQUEST_TIMEOUT_MS: '10' }, { persistSecret: false })).toThrow(/REQUEST_TIMEOUT_MS/);
  });
});
