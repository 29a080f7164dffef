#!/usr/bin/env node
// Runs the compiled CLI (dist/cli.js) with plain node, compiling src/ first when dist/ is
// missing or older than the sources (see scripts/build.mjs).
import { ensureBuilt } from '../scripts/build.mjs';

ensureBuilt();
await import('../dist/cli.js');
