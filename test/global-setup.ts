import { ensureBuilt } from '../scripts/build.mjs';

/** Once per run, before any test file: bring dist/ up to date with src/ (test/helpers/cli-process.ts runs it). */
export default async function buildOnce(): Promise<void> {
  await ensureBuilt();
}
