import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDITED_ROUTES } from '../../src/plugins/audit-trail.js';

/**
 * Every action the audit trail records has a test that performs it and finds its row (issue 33 item 5):
 * a new route added to AUDITED_ROUTES without such a test fails here. The tests that record them are
 * audit.test.ts, audit-changes.test.ts and two-factor.test.ts.
 */
describe('audit trail coverage', () => {
  it('names each recorded action in a test that asserts its row', () => {
    const dir = path.resolve('test/http');
    const recording = ['audit.test.ts', 'audit-changes.test.ts', 'two-factor.test.ts'].map((file) => readFileSync(path.join(dir, file), 'utf8')).join('\n');
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['audit.test.ts', 'audit-changes.test.ts', 'two-factor.test.ts']));
    const actions = new Set(Object.values(AUDITED_ROUTES).flatMap((action) => (action === 'login' ? ['login.success', 'login.failed', 'login.two_factor_required'] : [action])));
    actions.add('api_token.new_network');
    const untested = [...actions].filter((action) => !recording.includes(`'${action}'`));
    expect(untested).toEqual([]);
  });
});
