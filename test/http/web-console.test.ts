import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from '../../src/plugins/error-handler.js';
import { CONSOLE_CSP, webConsolePlugin } from '../../src/plugins/web-console.js';

/** The static plugin on its own, over a built-looking directory made here (no dependency on web/dist). */
describe('web console static serving', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function serve(files: Record<string, string>): Promise<FastifyInstance> {
    const root = mkdtempSync(path.join(tmpdir(), 'basegate-web-'));
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), content);
    }
    app = Fastify();
    await app.register(errorHandlerPlugin);
    app.get('/api2/ping/', async () => 'pong');
    await app.register(webConsolePlugin, { root });
    await app.ready();
    return app;
  }

  it('serves index.html at / (revalidated) and hashed assets as immutable, both with the CSP', async () => {
    const a = await serve({ 'index.html': '<!doctype html><script src="/assets/index-abc123.js"></script>', 'assets/index-abc123.js': 'console.log(1)' });
    const index = await a.inject({ url: '/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toMatch(/text\/html/);
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    const asset = await a.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-security-policy']).toBe(CONSOLE_CSP);
  });

  it('leaves every other path to the API: unknown /api paths and missing files are JSON 404s', async () => {
    const a = await serve({ 'index.html': 'x' });
    expect((await a.inject({ url: '/api2/ping/' })).body).toBe('pong');
    for (const url of ['/api/v2.1/nothing/', '/api-gateway/api/v2/x', '/assets/missing.js', '/../package.json', '/some/page']) {
      const res = await a.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({ error_msg: 'Not found.' });
    }
    const post = await a.inject({ method: 'POST', url: '/' });
    expect(post.statusCode).toBe(404);
  });

  it('serves the API only when the console is not built', async () => {
    app = Fastify();
    await app.register(errorHandlerPlugin);
    await app.register(webConsolePlugin, { root: mkdtempSync(path.join(tmpdir(), 'basegate-empty-')) });
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_msg: 'Not found.' });
  });
});
