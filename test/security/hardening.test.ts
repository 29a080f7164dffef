import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('hardening (%s)', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
  });
  afterAll(() => t.close());

  it('answers framework errors in the documented {"error_msg"} shape', async () => {
    const badUrl = await t.request({ method: 'GET', url: '/api/v2.1/external-link-tokens/%E0%A4%A/access-token/' });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json()).toEqual({ error_msg: 'The URL is not correctly encoded.' });
    const longParam = await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${'a'.repeat(3000)}/access-token/` });
    expect(longParam.statusCode).toBe(414);
    expect(longParam.json()).toHaveProperty('error_msg');
    const badJson = await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/json' }, payload: '{"username":' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toEqual({ error_msg: 'Request body is not valid JSON.' });
  });

  it('answers an oversized header block in the documented shape over a real socket', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`GET /ping/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
      });
      let data = '';
      socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', (error) => (data ? resolve(data) : reject(error)));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe(JSON.stringify({ error_msg: 'Request header fields are too large.' }));
  });

  it('keeps a client X-Request-Id only when it is a short safe token', async () => {
    const kept = await t.request({ method: 'GET', url: '/ping/', headers: { 'x-request-id': 'abc-123_X.y:z' } });
    expect(kept.headers['x-request-id']).toBe('abc-123_X.y:z');
    for (const bad of ['a'.repeat(65), 'has space', '<script>', 'new\\nline', '']) {
      const res = await t.request({ method: 'GET', url: '/ping/', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).not.toBe(bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('sends nosniff everywhere and no-store on responses that carry tokens', async () => {
    const ping = await t.request({ method: 'GET', url: '/ping/' });
    expect(ping.headers['x-content-type-options']).toBe('nosniff');
    expect(ping.headers['cache-control']).toBeUndefined();
    const notFound = await t.request({ method: 'GET', url: '/nowhere/' });
    expect(notFound.headers['x-content-type-options']).toBe('nosniff');
    const login = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: user.email, password: user.password } });
    expect(login.headers['cache-control']).toBe('no-store');
    const base = await createBase(t, user);
    for (const url of [basePath(base, 'access-token/'), basePath(base, 'external-links/'), basePath(base, 'temp-api-token/')]) {
      const res = await t.request({ method: 'GET', url, token: user.token });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
  });
});

describe('METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { METRICS_TOKEN: 'metrics-token-0123456789' });
  });
  afterAll(() => t.close());

  it('requires the token on /metrics only', async () => {
    expect((await t.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
    const ok = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# HELP');
    expect((await t.request({ method: 'GET', url: '/ping/' })).statusCode).toBe(200);
  });
});

describe('DATA_DIR permissions', () => {
  it('creates DATA_DIR 0700 and the generated secret key 0600', async () => {
    const { mkdtempSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const { loadConfig } = await import('../../src/config/index.js');
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'basegate-perm-')), 'data');
    loadConfig({ DATA_DIR: dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dir, 'secret_key')).mode & 0o777).toBe(0o600);
  });
});

describe('SQLite file permissions', () => {
  it('creates the database file and its WAL files 0600 whatever the umask, and tightens an existing file', async () => {
    const { existsSync, mkdtempSync, statSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const { connect } = await import('../../src/db/index.js');
    const { sql } = await import('kysely');
    const dir = mkdtempSync(path.join(tmpdir(), 'basegate-perm-'));
    const previous = process.umask(0o002);
    try {
      const fresh = connect({ databaseUrl: null, dataDir: dir });
      await sql`create table t (x integer)`.execute(fresh.db);
      await sql`insert into t values (1)`.execute(fresh.db);
      const file = path.join(dir, 'basegate.sqlite3');
      for (const name of [file, `${file}-wal`, `${file}-shm`]) {
        expect(existsSync(name), name).toBe(true);
        expect(statSync(name).mode & 0o777, name).toBe(0o600);
      }
      await fresh.close();

      const loose = path.join(dir, 'loose.sqlite3');
      writeFileSync(loose, '', { mode: 0o644 });
      const existing = connect({ databaseUrl: `sqlite:${loose}`, dataDir: dir });
      expect(statSync(loose).mode & 0o777).toBe(0o600);
      await existing.close();
    } finally {
      process.umask(previous);
    }
  });
});
