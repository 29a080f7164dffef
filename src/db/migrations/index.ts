import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';

/**
 * Every migration, in order. Listed statically (not read from disk) so the same list works under
 * tsx, compiled output and tests. Add new ones at the end; never edit a landed one.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
};
