#!/usr/bin/env node
// Runs the bundled CLI (dist/cli.js) with plain node, bundling src/ first when dist/ is
// missing or older than the sources (see scripts/build.mjs).
import { ensureBuilt } from '../scripts/build.mjs';

await ensureBuilt();
try {
  await import('../dist/cli.js');
} catch (error) {
  // A build finishing in another process swaps dist/ by two renames (scripts/build.mjs): a load in the
  // instant between them finds no file. Once more; any other missing module fails the same way again.
  if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  await new Promise((resolve) => setTimeout(resolve, 200));
  await import('../dist/cli.js?again');
}
