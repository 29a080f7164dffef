// Installs Debian packages for the test suite's own tools (chromium, the Python SDK's libraries).
// Another apt-get may hold the dpkg lock (an unattended upgrade, a parallel install): wait for it
// instead of failing, and retry a failed download a few times before giving up.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const LOCK_WAIT_SECONDS = '600';
const ATTEMPTS = 3;

export function mayInstallWithApt() {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return isRoot && existsSync('/usr/bin/apt-get');
}

export function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args, timeout) =>
    execFileSync('apt-get', ['-o', `DPkg::Lock::Timeout=${LOCK_WAIT_SECONDS}`, ...args], { stdio: 'inherit', env, timeout });
  for (let attempt = 1; ; attempt++) {
    try {
      apt(['update', '-qq'], 300_000);
      apt(['install', '-y', '-qq', ...packages], 900_000);
      return;
    } catch (error) {
      if (attempt >= ATTEMPTS) throw error;
      console.error(`apt-get failed (attempt ${attempt} of ${ATTEMPTS}); trying again in ${attempt * 10} s`);
      execFileSync('sleep', [String(attempt * 10)]);
    }
  }
}
