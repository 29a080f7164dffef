/**
 * now() / today() formulas: materialized at the write, then refreshed by the hourly scheduled tick
 * through the write path — changed cells become modify events, unchanged rows and other tables stay
 * untouched, mtime is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from './rows.fixtures.js';

const TICK = 'formulas-now-today-refresh';

describe.each(DIALECTS)('now() and today() refresh (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let ids: string[];

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Today', column_type: 'formula', column_data: { formula: 'today()' } },
      { column_name: 'Hour', column_type: 'formula', column_data: { formula: 'hour(now())' } },
      { column_name: 'Late', column_type: 'formula', column_data: { formula: 'if({Due} < today(), "late", "ok")' } },
      { column_name: 'Plain', column_type: 'formula', column_data: { formula: 'len({Name})' } },
    ]);
    await addTable(g, 'Static', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Size', column_type: 'formula', column_data: { formula: 'len({Name})' } },
    ]);
    ids = await appendRows(g, 'Tasks', [
      { Name: 'a', Due: '2026-01-06' },
      { Name: 'bb', Due: '2026-01-05' },
    ]);
    await appendRows(g, 'Static', [{ Name: 'now' }]);
  });
  afterAll(() => t.close());

  const rows = async () => Object.fromEntries((await listRows(g, 'table_name=Tasks&convert_keys=true')).map((r) => [r.Name, r]));
  const events = () => t.container.db.selectFrom('events').select(['op_type', 'op_user', 'row_id', 'row_data']).where('base_id', '=', g.base.id).orderBy('id').execute();

  it('keeps the values of the write until the tick runs, then refreshes them with modify events', async () => {
    // The clock starts at 2026-01-05 10:00 UTC (11:00 in Berlin).
    const first = await rows();
    expect(first.a).toMatchObject({ Today: '2026-01-05T00:00:00+01:00', Hour: 11, Late: 'ok', Plain: 1 });
    const mtime = first.a!._mtime;
    t.clock.advance(24 * 3_600_000 + 2 * 3_600_000);
    expect((await rows()).a).toMatchObject({ Today: '2026-01-05T00:00:00+01:00', Hour: 11 });
    const before = (await events()).length;

    const outcome = await t.container.scheduler.runOnce(TICK);
    expect(outcome).toEqual({ ran: true, result: { bases: 1, rows: 2, failed: 0 } });
    const after = await rows();
    expect(after.a).toMatchObject({ Today: '2026-01-06T00:00:00+01:00', Hour: 13, Late: 'ok', Plain: 1 });
    expect(after.bb).toMatchObject({ Today: '2026-01-06T00:00:00+01:00', Late: 'late' });
    expect(after.a!._mtime).toBe(mtime);

    const fresh = (await events()).slice(before);
    expect(fresh.map((e) => [e.op_type, e.op_user, e.row_id]).sort()).toEqual([
      ['modify_row', 'system', ids[0]],
      ['modify_row', 'system', ids[1]],
    ].sort());
    const changed = JSON.parse(fresh.find((e) => e.row_id === ids[1])!.row_data) as Array<{ column_name: string; value: unknown; old_value: unknown }>;
    expect(changed).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Late', value: 'late', old_value: 'ok' })]));
  });

  it('writes nothing when no value moved', async () => {
    const before = (await events()).length;
    const outcome = await t.container.scheduler.runOnce(TICK);
    expect(outcome).toEqual({ ran: true, result: { bases: 1, rows: 0, failed: 0 } });
    expect((await events()).length).toBe(before);
  });

  it('is registered as an hourly tick', () => {
    expect(t.container.scheduler.tickNames()).toContain(TICK);
  });
});
