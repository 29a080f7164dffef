// `npm test` runs the official Python SDK (vendored in test/compat/python-sdk) against a listening
// server. Its dependencies come from Debian: install them with apt-get when we may (root);
// otherwise say how, and fail before the suite starts.
import { ensureDebian, runs } from './ensure-debian.mjs';

const python = process.env.TEST_PYTHON ?? '/usr/bin/python3';
const packages = ['python3-requests', 'python3-socketio', 'python3-dateutil', 'python3-ply'];
ensureDebian({
  label: 'Python SDK tests',
  packages: ['python3', ...packages],
  ready: () => runs(python, ['-c', 'import requests, socketio, dateutil, ply']),
  hint: `${python} with ${packages.join(', ')}, or TEST_PYTHON`,
});
