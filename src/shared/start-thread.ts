import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on `<name>.ts` beside `from`: from the bundle, dist/<name>.js beside dist/cli.js
 * (scripts/build.mjs builds each thread entry); from the sources (tsx, vitest), the .ts file through tsx's loader.
 */
export function startThread(from: string, name: string, options: WorkerOptions): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options);
  const entry = new URL(`./${name}.ts`, from).href;
  // tsx's ESM loader (its CommonJS entry points at a file it does not ship, so take the .mjs beside it).
  const tsx = new URL('index.mjs', pathToFileURL(createRequire(from).resolve('tsx/esm/api'))).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`, { ...options, eval: true });
}
