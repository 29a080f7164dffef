import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * How a test runs basegate's CLI in a process of its own: the bundle in dist/ (what `npm start` runs),
 * built from src/ once before the run by test/global-setup.ts. One node process that loads one file,
 * instead of the tsx loader compiling ~600 modules at every start: about a third of the start time,
 * and the real-process tests (lifecycle, kill-recovery, backup-restore …) start many servers.
 */
export function cliCommand(...args: string[]): [string, string[]] {
  return [process.execPath, [path.join(ROOT, 'dist/cli.js'), ...args]];
}
