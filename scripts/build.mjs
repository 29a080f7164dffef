#!/usr/bin/env node
// Compiles src/ into dist/ (tests excluded, see tsconfig.build.json). `npm run build` runs it;
// bin/basegate.js calls `ensureBuilt()` so `npm start` rebuilds only when dist/ is older than src/.
// The output is written to a temporary directory first and renamed into place, so a process
// starting meanwhile never sees half a build and a failed build leaves the previous one intact.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.build-stamp');
/** Inputs besides src/ whose change makes the output stale. */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

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
  for (const file of INPUTS) newest = Math.max(newest, statSync(path.join(ROOT, file)).mtimeMs);
  return newest;
}

/** True when dist/ is missing or older than any input. */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  return statSync(STAMP).mtimeMs < newestInput();
}

/** Compile into dist/; returns tsc's exit code (0 on success). */
export function build({ log = (line) => process.stderr.write(line + '\n') } = {}) {
  const tmp = path.join(ROOT, `dist.tmp-${process.pid}`);
  removeAbandonedBuilds();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  log('basegate: compiling src/ into dist/ …');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', tmp], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = result.status ?? 1;
  if (code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    log(`basegate: build failed (tsc exit ${code})`);
    return code;
  }
  writeFileSync(path.join(tmp, '.build-stamp'), new Date().toISOString() + '\n');
  rmSync(DIST, { recursive: true, force: true });
  try {
    renameSync(tmp, DIST);
  } catch (error) {
    // Another process renamed its (equally fresh) build into place first.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(STAMP)) throw error;
  }
  return 0;
}

/** Remove temporary outputs of builds whose process is gone (killed mid-build). */
function removeAbandonedBuilds() {
  for (const name of readdirSync(ROOT)) {
    const match = /^dist\.tmp-(\d+)$/.exec(name);
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
export function ensureBuilt() {
  if (!isStale()) return;
  const code = build();
  if (code !== 0) throw new Error(`basegate: the build failed (exit ${code}); run \`npm run build\` to see why`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(build());
}
