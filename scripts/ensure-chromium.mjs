// `npm test` runs the console's browser tests (test/e2e) in Debian's chromium. On a machine without
// it, install it with apt-get when we may (root); otherwise say how, and fail before the suite starts.
import { existsSync } from 'node:fs';
import { aptInstall, mayInstallWithApt } from './apt-install.mjs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  if (!mayInstallWithApt()) {
    console.error(`The browser tests need Chromium at ${chromium}: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH.`);
    process.exit(1);
  }
  console.log('Installing Debian\'s chromium for the browser tests (test/e2e)…');
  aptInstall(['chromium']);
}
