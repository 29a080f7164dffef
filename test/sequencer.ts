import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that take the longest (real server processes, browsers, real timeouts), measured on this
 * 2-core machine. Started first, so the run does not end with one of them still going while the
 * other workers idle. Vitest's own order (by the last run's durations, else by file size) knows
 * nothing on a fresh clone, which is how CI runs. Order within the list: longest first, roughly.
 */
const SLOW_FIRST = [
  'test/faults/kill-recovery.test.ts',
  'test/faults/backup-restore.test.ts',
  'test/faults/lifecycle.test.ts',
  'test/e2e/console.test.ts',
  'test/e2e/first-contact.test.ts',
  'test/faults/graceful-stop.test.ts',
  'test/cli/cli.test.ts',
  'test/http/two-factor.test.ts',
  'test/http/webhooks-retry.test.ts',
  'test/faults/import-kill.test.ts',
  'test/faults/nats-kill.test.ts',
  'test/e2e/grid-views.test.ts',
  'test/faults/database-faults.test.ts',
  'test/http/permission-matrix.test.ts',
  'test/cli/first-hour.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FIRST.indexOf(path.relative(root, spec.moduleId));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    const groupOrder = (spec: TestSpecification) => spec.project.config.sequence.groupOrder ?? 0;
    // Stable: the base order stays among files of equal rank, and the serial groups stay last.
    return sorted
      .map((spec, index) => ({ spec, index, rank: rank(spec), group: groupOrder(spec) }))
      .sort((a, b) => a.group - b.group || a.rank - b.rank || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
