import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('operation log: large values are stored compressed (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
  });
  afterAll(() => t.close());

  it('compresses a large write in the log and reads it back whole (list, restore)', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const ids = await appendRows(g, 'T', Array.from({ length: 20 }, (_, i) => ({ Name: `${i} ${text}` })));
    await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: ids });
    const stored = await t.container.db.selectFrom('operation_log').select(['id', 'changes', 'op_type']).orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(stored.op_type).toBe('delete_rows');
    if (dialect === 'postgres') {
      // Stored as JSON text; the server compresses it (TOAST).
      expect(stored.changes.startsWith('{')).toBe(true);
      const size = await sql<{ n: number }>`SELECT pg_column_size(changes) AS n FROM operation_log WHERE id = ${stored.id}`.execute(t.container.db);
      expect(Number(size.rows[0]!.n)).toBeLessThan((text.length * 20) / 10);
    } else {
      expect(stored.changes.startsWith('z:')).toBe(true);
      expect(stored.changes.length).toBeLessThan((text.length * 20) / 10);
    }

    const listed = (await g.call('GET', 'operations/?per_page=1')).json().operations[0];
    expect(JSON.parse(listed.operation).deleted_rows).toHaveLength(20);
    expect(listed.operation).toContain(`19 ${text}`);
    expect((await g.call('PUT', `restore-operations/${listed.op_id}/`, {})).statusCode).toBe(200);
    const rows = (await g.call('GET', 'rows/?table_name=T&convert_keys=true')).json().rows as Array<{ Name: string }>;
    expect(rows.map((r) => r.Name).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `${i} ${text}`).sort());

    // Pruning reads compressed entries too.
    t.clock.advance(181 * 86_400_000);
    expect(await t.container.history.service.prune(t.clock.now())).toBeGreaterThanOrEqual(3);
    expect(await t.container.db.selectFrom('operation_log_rows').selectAll().execute()).toEqual([]);
  });
});
