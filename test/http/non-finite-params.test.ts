import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appWithTable, type Gateway } from './rows.fixtures.js';

/**
 * ajv's type coercion turns "1e309" and "Infinity" into Infinity, which then passes its integer and
 * maximum checks: a path or query number that is not finite must be a 400, never a database error.
 */
describe.each(DIALECTS)('non-finite numbers in paths and queries (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
  });
  afterAll(() => t.close());

  it('answers 400 naming the parameter, for path ids and query numbers', async () => {
    for (const id of ['1e309', 'Infinity', '-1e309']) {
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await g.call(method, `comments/${id}/`);
        expect(res.statusCode, `${method} comments/${id}/ ${res.body}`).toBe(400);
        expect(res.json().error_msg).toMatch(/^comment_id invalid/);
      }
    }
    const listed = await g.call('GET', 'comments/?start=1e309&limit=Infinity');
    expect(listed.statusCode, listed.body).toBeLessThan(500);
    expect((await g.call('GET', 'comments/1/')).statusCode).toBe(404);
  });
});
