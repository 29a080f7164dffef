import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadConfig } from './load.js';

const KEY = 'k'.repeat(40);
const dir = () => mkdtempSync(path.join(tmpdir(), 'basegate-config-'));

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({ SECRET_KEY: KEY, DATA_DIR: '/tmp/x' });
    expect(config).toMatchObject({
      port: 8000,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:8000',
      databaseUrl: null,
      redisUrl: null,
      adminEmail: 'admin@example.com',
      adminPassword: null,
      logLevel: 'info',
      heapGrowingPercent: 50,
      edition: 'self-hosted',
      bodyLimitBytes: 1024 * 1024,
      trustProxy: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('turns PostgreSQL parallel workers and JIT off unless set (PG_PARALLEL_WORKERS, PG_JIT)', () => {
    expect(loadConfig({ SECRET_KEY: KEY, DATA_DIR: '/tmp/x' })).toMatchObject({ pgParallelWorkers: 0, pgJit: false });
    expect(loadConfig({ SECRET_KEY: KEY, DATA_DIR: '/tmp/x', PG_PARALLEL_WORKERS: '2', PG_JIT: 'true' })).toMatchObject({ pgParallelWorkers: 2, pgJit: true });
    for (const bad of ['-1', '65', 'two']) expect(() => loadConfig({ SECRET_KEY: KEY, DATA_DIR: '/tmp/x', PG_PARALLEL_WORKERS: bad })).toThrow(/PG_PARALLEL_WORKERS/);
    expect(() => loadConfig({ SECRET_KEY: KEY, DATA_DIR: '/tmp/x', PG_JIT: 'maybe' })).toThrow(/PG_JIT/);
  });

  it('derives PUBLIC_URL from HOST and PORT and strips a trailing slash from an explicit one', () => {
    expect(loadConfig({ SECRET_KEY: KEY, HOST: '0.0.0.0', PORT: '9000' }).publicUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ SECRET_KEY: KEY, PUBLIC_URL: 'https://base.example.com/' }).publicUrl).toBe('https://base.example.com');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PUBLIC_URL', 'ftp://x'],
    ['PUBLIC_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['ADMIN_EMAIL', 'nope'],
    ['ADMIN_PASSWORD', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['HEAP_GROWING_PERCENT', '-5'],
    ['HEAP_GROWING_PERCENT', '1001'],
    ['EDITION', 'enterprise'],
    ['SECRET_KEY', 'too-short'],
    ['TRUST_PROXY', 'perhaps'],
    ['BODY_LIMIT_BYTES', '12'],
  ])('names %s when its value %j is bad', (name, value) => {
    const env = { SECRET_KEY: KEY, [name]: value };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('takes HEAP_GROWING_PERCENT, 0 leaving V8 its own factor', () => {
    expect(loadConfig({ SECRET_KEY: KEY, HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadConfig({ SECRET_KEY: KEY, HEAP_GROWING_PERCENT: '100' }).heapGrowingPercent).toBe(100);
  });

  it('generates SECRET_KEY once and keeps it in DATA_DIR', () => {
    const dataDir = dir();
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(first.secretKey).toHaveLength(64);
    expect(second.secretKey).toBe(first.secretKey);
    expect(readFileSync(path.join(dataDir, 'secret_key'), 'utf8').trim()).toBe(first.secretKey);
  });

  it('prefers SECRET_KEY from the environment', () => {
    expect(loadConfig({ DATA_DIR: dir(), SECRET_KEY: KEY }).secretKey).toBe(KEY);
  });
});
