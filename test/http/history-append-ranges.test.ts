import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { cellsReadCounts, setCellsRead, storedCellsOfAppends } from '../../src/modules/history/stored-cells.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, gateway, type Gateway } from './rows.fixtures.js';

type Op = { op_id: number; op_type: string; operation: string };

/**
 * A page of appends whose cells PostgreSQL reads as id ranges of `base_rows` (stored-cells.ts) lists
 * exactly what the read by id gives, whatever happened to the rows since: updated, deleted (the
 * deletion's kept cells), purged, deleted and restored (a new id), interleaved with another append's
 * rows, and with another base's rows (same row ids) in the middle of the range.
 */
describe.each(DIALECTS)('history: appended cells read by id ranges (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(async () => {
    setCellsRead('ranges');
    await t.close();
  });

  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ Name: `${prefix}${i}` }));
  const page = async (): Promise<Op[]> => {
    const res = await g.call('GET', 'operations/?per_page=100');
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ operations: Op[] }>().operations;
  };
  const rowNames = (op: Op) => (JSON.parse(op.operation) as { row_datas: Array<Record<string, unknown>> }).row_datas.map((r) => r['0000']);
  const db = () => t.container.db;
  const storedIds = async (rowIds: string[]) => {
    const rows = await db().selectFrom('base_rows').select(['row_id', 'id']).where('base_id', '=', g.base.id).where('row_id', 'in', rowIds).execute();
    return new Map(rows.map((r) => [r.row_id, Number(r.id)]));
  };
  /** Gives these rows (each group appended together) interleaved ids, as two writers appending at once would. */
  const interleave = async (a: string[], b: string[]) => {
    const ids = await storedIds([...a, ...b]);
    const slots = [...ids.values()].sort((x, y) => x - y);
    await sql`UPDATE base_rows SET id = -id WHERE base_id = ${g.base.id} AND id >= ${slots[0]} AND id <= ${slots[slots.length - 1]}`.execute(db());
    for (let i = 0; i < a.length; i++) {
      await sql`UPDATE base_rows SET id = ${slots[2 * i]} WHERE base_id = ${g.base.id} AND row_id = ${a[i]}`.execute(db());
      await sql`UPDATE base_rows SET id = ${slots[2 * i + 1]} WHERE base_id = ${g.base.id} AND row_id = ${b[i]}`.execute(db());
    }
  };

  it('lists every append as appended, equal to the read by id, and reads by range on PostgreSQL', async () => {
    await addTable(g, 'T2', [{ column_name: 'Name', column_type: 'text' }]);
    const other = await gateway(t);

    // Updated after the append: the later changes are undone.
    const plain = await appendRows(g, 'Table1', names('p', 40));
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: plain[0], row: { Name: 'changed' } }] });
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: plain[2], row: { Name: 'again' } }, { row_id: plain[3], row: { Name: 'too' } }] });

    // Two appends (two tables) whose rows interleave in id order.
    const x = await appendRows(g, 'Table1', names('x', 20));
    const y = await appendRows(g, 'T2', names('y', 20));
    await interleave(x, y);

    // Deleted after the append (one purged); another base's rows, under the same row ids, take their place in the range.
    const d = await appendRows(g, 'Table1', names('d', 20));
    const freed = await storedIds([d[1]!, d[5]!, d[9]!]);
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: d[3], row: { Name: 'd3 later' } }] });
    expect((await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [d[1], d[5], d[9]] })).statusCode).toBe(200);
    expect((await g.call('DELETE', `trash/rows/${d[9]}/`)).statusCode).toBe(200);
    for (const rowId of [d[1]!, d[5]!, d[9]!]) {
      await db()
        .insertInto('base_rows')
        .values({ id: freed.get(rowId)!, base_id: other.base.id, table_id: '0000', row_id: rowId, data: dialect === 'postgres' ? (sql`${JSON.stringify({ '0000': 'LEAK' })}::jsonb` as never) : JSON.stringify({ '0000': 'LEAK' }), ctime: 1, mtime: 1, creator: 'x', last_modifier: 'x' } as never)
        .execute();
    }

    // Deleted and restored (a new id): one in the middle, the last one after many other rows (far apart).
    const r = await appendRows(g, 'Table1', names('r', 20));
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [r[4], r[19]] });
    expect((await g.call('PUT', `trash/rows/${r[4]}/`, {})).statusCode).toBe(200);
    const filler = await appendRows(g, 'T2', names('f', 100));
    expect((await g.call('PUT', `trash/rows/${r[19]}/`, {})).statusCode).toBe(200);
    expect((await storedIds([r[19]!])).get(r[19]!)).toBeGreaterThan((await storedIds([filler[99]!])).get(filler[99]!)!);

    // Far apart: the last row restored after another base's append, so the append's span is mostly not its rows (read by id).
    const far = await appendRows(g, 'Table1', names('s', 10));
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [far[9]] });
    await appendRows(other, 'Table1', names('o', 1000));
    expect((await g.call('PUT', `trash/rows/${far[9]}/`, {})).statusCode).toBe(200);

    setCellsRead('ids');
    const byId = await page();
    setCellsRead('ranges');
    const before = { ...cellsReadCounts };
    const byRange = await page();
    const read = { ranges: cellsReadCounts.rangeRows - before.rangeRows, byId: cellsReadCounts.byIdRows - before.byIdRows };
    expect(byRange).toEqual(byId);
    expect(JSON.stringify(byRange)).not.toContain('LEAK');

    // (In the listing a deleted row's cells are its deletion's anyway: read the stored cells themselves.)
    const stored = await storedCellsOfAppends(db(), g.base.id, [d]);
    expect([...stored.keys()].sort()).toEqual(d.filter((_, i) => ![1, 5, 9].includes(i)).sort());
    expect(JSON.stringify([...stored.values()])).not.toContain('LEAK');

    const appendOf = (rowIds: string[]) => byRange.find((op) => op.op_type === 'insert_rows' && JSON.parse(op.operation).row_datas[0]._id === rowIds[0])!;
    expect(rowNames(appendOf(plain))).toEqual(names('p', 40).map((n) => n.Name));
    expect(rowNames(appendOf(x))).toEqual(names('x', 20).map((n) => n.Name));
    expect(rowNames(appendOf(y))).toEqual(names('y', 20).map((n) => n.Name));
    // The purged row shows no cells; the others as appended (a deleted one from its deletion's kept cells).
    expect(rowNames(appendOf(d))).toEqual(names('d', 20).map((n, i) => (i === 9 ? undefined : n.Name)));
    expect(rowNames(appendOf(r))).toEqual(names('r', 20).map((n) => n.Name));
    expect(rowNames(appendOf(filler))).toEqual(names('f', 100).map((n) => n.Name));
    expect(rowNames(appendOf(far))).toEqual(names('s', 10).map((n) => n.Name));

    if (dialect === 'postgres') {
      // The rows in place came from ranges; by id only those not in a dense one (the far append's, the two deleted; the purged one's cells are not read).
      expect(read.ranges).toBeGreaterThanOrEqual(plain.length + x.length + y.length + 17 + r.length + filler.length);
      expect(read.byId).toBe(far.length + 2);
    }
  });
});
