// Test dependencies from Debian: when `ready()` fails, install `packages` with apt-get if we may
// (root), otherwise say how (`hint`) and fail before the suite starts.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function ensureDebian({ label, packages, ready, hint }) {
  if (ready()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(`${label} need ${hint} (apt-get install -y ${packages.join(' ')}).`);
    process.exit(1);
  }
  console.log(`Installing the ${label} dependencies from Debian…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env, timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env, timeout: 600_000 });
}

/** Whether `command args` runs and exits 0 within 30 s. */
export function runs(command, args) {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}
