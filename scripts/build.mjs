#!/usr/bin/env node
// Bundles src/ into dist/cli.js (and the formula threads' dist/formula-thread.js) with esbuild (a dependency of tsx and vite). `npm run build`
// runs it; bin/basegate.js calls `ensureBuilt()` so `npm start` rebuilds only when dist/ is older than
// its inputs. One file instead of ~1,000 ES modules (ours, typebox's, kysely's, jose's …) roughly
// halves the CPU time to the first answer: resolving, reading and linking each module was most of it.
// Type checking is `npm run typecheck` (tsc), not part of the build.
// The output is written to a temporary directory first and renamed into place, so a process
// starting meanwhile never sees half a build and a failed build leaves the previous one intact.
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.build-stamp');
/** Inputs besides src/ whose change makes the output stale. */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json', 'scripts/build.mjs'];
/**
 * Left to node's own loader at run time: native code (better-sqlite3), packages loaded by path or in
 * worker threads (node-sql-parser), loaded on first use (ioredis, nodemailer), or that read files or
 * start workers relative to their own location (socket.io serves its client, pino's transports).
 */
// quickjs-emscripten loads its .wasm file relative to its own module: kept external.
const EXTERNAL = ['better-sqlite3', 'node-sql-parser', 'ioredis', 'nodemailer', 'socket.io', 'pino', 'thread-stream', 'pg-native', '@fastify/static', 'pino-pretty', '@fastify/swagger-ui', 'quickjs-emscripten'];

/** Newest modification time (ms) of the build's inputs. */
function newestInput() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  visit(path.join(ROOT, 'src'));
  for (const file of INPUTS) {
    const full = path.join(ROOT, file);
    if (existsSync(full)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** True when dist/ is missing or older than any input. */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  return statSync(STAMP).mtimeMs < newestInput();
}

/** Bundle into dist/; returns 0 on success, 1 when esbuild reports errors. */
export async function build({ log = (line) => process.stderr.write(line + '\n') } = {}) {
  const tmp = path.join(ROOT, `dist.tmp-${process.pid}`);
  removeAbandonedBuilds();
  log('basegate: compiling src/ into dist/ …');
  const esbuild = await import('esbuild');
  try {
    await esbuild.build({
      absWorkingDir: ROOT,
      // The formula threads' code is an entry of its own (src/modules/formulas/formula-threads.ts starts dist/formula-thread.js).
      entryPoints: { cli: 'src/cli.ts', 'formula-thread': 'src/modules/formulas/formula-thread.ts', 'script-thread': 'src/modules/automations/script-thread.ts' },
      outdir: tmp,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: EXTERNAL,
      // Class and function names stay as written (errors and logs show them).
      keepNames: true,
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: 'linked',
      // The CommonJS packages in the bundle call require() for node's own modules.
      banner: { js: "import { createRequire as __basegateCreateRequire } from 'node:module'; const require = __basegateCreateRequire(import.meta.url);" },
      logLevel: 'error',
    });
  } catch {
    rmSync(tmp, { recursive: true, force: true });
    log('basegate: build failed');
    return 1;
  }
  writeFileSync(path.join(tmp, '.build-stamp'), new Date().toISOString() + '\n');
  // Swapped in by two renames and the old build removed after, so a process loading dist/ meanwhile
  // (a test's CLI while another test builds) finds a whole build but in the instant between the renames
  // (bin/basegate.js tries once more then); removing the old one first left dist/ missing for as long
  // as that took.
  const old = path.join(ROOT, `dist.old-${process.pid}`);
  let replaced = false;
  try {
    renameSync(DIST, old);
    replaced = true;
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    renameSync(tmp, DIST);
  } catch (error) {
    // Another process renamed its (equally fresh) build into place first.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(STAMP)) throw error;
  }
  if (replaced) rmSync(old, { recursive: true, force: true });
  return 0;
}

/** Remove temporary outputs and replaced builds of builds whose process is gone (killed mid-build). */
function removeAbandonedBuilds() {
  for (const name of readdirSync(ROOT)) {
    const match = /^dist\.(?:tmp|old)-(\d+)$/.exec(name);
    if (match && !isAlive(Number(match[1]))) rmSync(path.join(ROOT, name), { recursive: true, force: true });
  }
}

function isAlive(pid) {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Build when dist/ is stale; throws when that build fails. */
export async function ensureBuilt() {
  if (!isStale()) return;
  const code = await build();
  if (code !== 0) throw new Error(`basegate: the build failed (exit ${code}); run \`npm run build\` to see why`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(await build());
}
