#!/usr/bin/env node
// Runs the bundled CLI (dist/cli.js) with plain node, bundling src/ first when dist/ is
// missing or older than the sources (see scripts/build.mjs).
import { ensureBuilt } from '../scripts/build.mjs';

await ensureBuilt();
await import('../dist/cli.js');
