import { expect } from 'vitest';
import { type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/**
 * The row-index tests' table "Big": 300 rows (the tests lower "big" to 100) of Name, Price (numbers,
 * empties, and numbers stored as text, which number comparisons must not match), Kind (a single select)
 * and, with `due`, a date column Due with and without a time.
 */
export async function bigTable(t: TestApp, { due = false } = {}): Promise<{ g: Gateway; tableId: string; rows: Array<Record<string, unknown>> }> {
  const g = await gateway(t);
  const table = await addTable(g, 'Big', [
    { column_name: 'Name', column_type: 'text' },
    { column_name: 'Price', column_type: 'number' },
    { column_name: 'Kind', column_type: 'single-select' },
    ...(due ? [{ column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } }] : []),
  ]);
  const kinds = ['Open', 'Closed', 'Waiting'];
  const rows = Array.from({ length: 300 }, (_, i) => {
    const row: Record<string, unknown> = { Name: `item ${String(i).padStart(3, '0')}` };
    if (i % 7 !== 0) row.Price = i % 11 === 0 ? String(i) : (i * 37) % 1000;
    if (i % 5 !== 0) row.Kind = kinds[i % 3];
    if (due && i % 4 !== 0) row.Due = `2026-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}${i % 2 ? ' 10:30' : ''}`;
    return row;
  });
  await appendRows(g, 'Big', rows);
  return { g, tableId: table._id as string, rows };
}

/**
 * The SQL endpoint as the row-index tests call it: `run` answers a statement's results (asserting 200),
 * `explain` its plan, `indexes` the base data's row indexes. `current` names the suite's app and gateway
 * (set in its beforeAll).
 */
export function sqlCalls(current: () => { t: TestApp; g: Gateway }) {
  const run = async (statement: string) => {
    const { g } = current();
    const res = await g.call('POST', 'sql/', { sql: statement, convert_keys: true });
    expect(res.statusCode, `${statement}: ${res.body}`).toBe(200);
    return res.json<{ results: unknown[] }>().results;
  };
  const explain = (statement: string) => {
    const { t, g } = current();
    return t.container.sql.explain({ base: { id: g.base.id, uuid: g.base.uuid }, permission: 'rw', actor: { user: 'test', app: null } }, { sql: statement, convert_keys: true });
  };
  const indexes = () => current().t.container.baseData.indexes;
  return { run, explain, indexes };
}
