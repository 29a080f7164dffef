// `npm test` runs the official Python SDK (vendored in test/compat/python-sdk) against a listening
// server. Its dependencies come from Debian: install them with apt-get when we may (root);
// otherwise say how, and fail before the suite starts.
import { execFileSync } from 'node:child_process';
import { aptInstall, mayInstallWithApt } from './apt-install.mjs';

const python = process.env.TEST_PYTHON ?? '/usr/bin/python3';
const packages = ['python3-requests', 'python3-socketio', 'python3-dateutil', 'python3-ply'];
const ready = () => {
  try {
    execFileSync(python, ['-c', 'import requests, socketio, dateutil, ply'], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
};
if (!ready()) {
  if (!mayInstallWithApt()) {
    console.error(`The Python SDK tests need ${python} with ${packages.join(', ')} (apt-get install -y ${packages.join(' ')}) or TEST_PYTHON.`);
    process.exit(1);
  }
  console.log('Installing the Python SDK test dependencies from Debian…');
  aptInstall(['python3', ...packages]);
}
