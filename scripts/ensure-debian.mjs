// Test dependencies from Debian: when `ready()` fails, install `packages` with apt-get if we may
// (root), otherwise say how (`hint`) and fail before the suite starts.
import { execFileSync } from 'node:child_process';
import { aptInstall, mayInstallWithApt } from './apt-install.mjs';

export function ensureDebian({ label, packages, ready, hint }) {
  if (ready()) return;
  if (!mayInstallWithApt()) {
    console.error(`${label} need ${hint} (apt-get install -y ${packages.join(' ')}).`);
    process.exit(1);
  }
  console.log(`Installing the ${label} dependencies from Debian…`);
  aptInstall(packages);
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
