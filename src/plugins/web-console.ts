import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * `web/dist`, the built console, under the package root: the nearest directory above this file with a
 * package.json, both from `src/plugins/` (tsx) and from the bundle `dist/cli.js`.
 */
export const WEB_DIST = path.join(packageRoot(path.dirname(fileURLToPath(import.meta.url))), 'web/dist');

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '../..');
  }
}

/**
 * Scripts only from this origin; styles also inline because the grid injects its stylesheet at
 * run time; the API is the only thing the console connects to.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  // blob: for image previews the console reads with the Account-Token (an <img src> cannot send it).
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves the web console (`web/dist`) at `/` when it has been built. Only files that exist at start
 * get a route (no wildcard), so every other path — `/api*` included — still reaches the JSON 404.
 * Hashed files under `/assets/` are immutable; `index.html` is revalidated on every load.
 */
export async function webConsolePlugin(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? WEB_DIST;
  if (!existsSync(path.join(root, 'index.html'))) {
    app.log.info({ root }, 'web console not built; serving the API only');
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    etag: true,
    lastModified: true,
    setHeaders(reply: FastifyReply, filePath: string) {
      const hashed = filePath.includes(`${path.sep}assets${path.sep}`);
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
    },
  });
  // The URL an external link hands out (workspaces.present.ts) opens the console, which shows the
  // base read-only without an account. The parameter is named `token` so request logs redact it.
  const openConsole = (_request: FastifyRequest, reply: FastifyReply) => reply.sendFile('index.html');
  for (const url of ['/dtable/external-links/:token/', '/dtable/external-links/custom/:token/']) {
    app.get(url, { schema: { hide: true } }, openConsole);
  }
}
