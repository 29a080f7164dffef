// `npm test` runs the console's browser tests (test/e2e) in Debian's chromium. On a machine without
// it, install it with apt-get when we may (root); otherwise say how, and fail before the suite starts.
import { existsSync } from 'node:fs';
import { ensureDebian } from './ensure-debian.mjs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
ensureDebian({
  label: 'browser tests (test/e2e)',
  packages: ['chromium'],
  ready: () => existsSync(chromium),
  hint: `Chromium at ${chromium} (Debian's chromium package), or CHROMIUM_PATH`,
});
