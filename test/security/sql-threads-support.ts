import { expect } from 'vitest';
import type { SqlThreads } from '../../src/modules/sql/index.js';
import type { TestApp } from '../helpers/index.js';
import { appendRows, type Gateway } from '../http/rows.fixtures.js';

/** The SQL threads of an app's SQL endpoint. */
export const threadsOf = (t: TestApp) => (t.container.sql as unknown as { limited: { threads: SqlThreads } }).limited.threads;

/**
 * On an app whose table T holds Names 'a' and 'b': a SELECT of the SQL endpoint runs on a SQL thread,
 * and a later one (each on a thread) sees a row written in between.
 */
export async function expectSelectsOnThreadSeeWrites(t: TestApp, g: Gateway): Promise<void> {
  const threads = threadsOf(t);
  const query = threads.query.bind(threads);
  let onThread = 0;
  threads.query = (...args) => {
    onThread++;
    return query(...args);
  };
  const res = await g.call('POST', 'sql/', { sql: "SELECT Name FROM T WHERE Name != 'zzz' ORDER BY Name", convert_keys: true });
  expect(res.statusCode).toBe(200);
  expect(res.json().results.map((r: { Name: string }) => r.Name)).toEqual(['a', 'b']);
  expect(onThread).toBe(1);
  await appendRows(g, 'T', [{ Name: 'c' }]);
  const again = await g.call('POST', 'sql/', { sql: 'SELECT COUNT(*) FROM T' });
  expect(again.json().results[0]).toEqual({ 'COUNT(*)': 3 });
  expect(onThread).toBe(2);
}
