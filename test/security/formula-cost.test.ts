import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { expectNoStall } from '../helpers/ping-stall.js';
import { addTable, gateway, listRows, type Gateway } from '../http/rows.fixtures.js';

/** Issue #24 item 1: no formula blocks the server; one over its budget is an error cell and the write succeeds. */
describe.each(DIALECTS)('formula cost is bounded (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const nested = (levels: number) => {
    let f = 'rept("ab", 50000)';
    for (let i = 0; i < levels; i++) f = `substitute(${f}, "${'ac'[i % 2]}", "${'ca'[i % 2]}")`;
    return f;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'T', [{ column_name: 'Text', column_type: 'text' }]);
    const formulas: Array<[string, string]> = [
      ['Nested', 'regexmatch({Text}, "((a+))+$")'],
      ['Adjacent', 'regexmatch({Text}, "a*a*a*a*a*a*b")'],
      ['Alternation', 'regexmatch({Text}, "(a|a)+$")'],
      ['Substitutes', `len(${nested(22)})`],
      ['Ordinary', 'regexextract({Text}, "(a+)!")'],
    ];
    for (const [name, formula] of formulas) {
      const res = await g.call('POST', 'columns/', { table_name: 'T', column_name: name, column_type: 'formula', column_data: { formula } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  afterAll(() => t.close());

  it('writes 100 rows of 101-character cells under backtracking patterns and a substitute chain without stalling /ping/', async () => {
    const text = `${'a'.repeat(100)}!`;
    const res = await expectNoStall(t, () => g.call('POST', 'rows/', { table_name: 'T', rows: Array.from({ length: 100 }, () => ({ Text: text })) }));
    expect(res.statusCode, res.body).toBe(200);
    const rows = await listRows(g, 'table_name=T&convert_keys=true&limit=1000');
    expect(rows).toHaveLength(100);
    // The patterns get their answers (RE2 matches in linear time); the substitute chain is over its budget: an error (empty) cell.
    for (const row of rows) expect(row).toMatchObject({ Nested: false, Adjacent: false, Alternation: false, Substitutes: null, Ordinary: 'a'.repeat(100) });
  });

  it('updating those rows later costs no more: every write is answered and /ping/ keeps answering', async () => {
    const rows = await listRows(g, 'table_name=T&limit=1000');
    const updates = rows.map((r) => ({ row_id: r._id, row: { Text: `${'a'.repeat(100)}b` } }));
    const res = await expectNoStall(t, () => g.call('PUT', 'rows/', { table_name: 'T', updates }));
    expect(res.statusCode, res.body).toBe(200);
    const after = await listRows(g, 'table_name=T&convert_keys=true&limit=1000');
    for (const row of after) expect(row).toMatchObject({ Nested: false, Adjacent: true, Alternation: false });
  });
});
