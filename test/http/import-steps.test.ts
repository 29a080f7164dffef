import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { releaseHeldEvents } from '../../src/modules/events/index.js';
import { dropStage, publishStaged } from '../../src/modules/rows/staging.js';
import { addTable, gateway, listRows, type Gateway } from './rows.fixtures.js';

/**
 * A large import's release and undo move its staged rows and held events in steps (each statement
 * under PostgreSQL's statement timeout, all in one transaction). Here the steps are a few rows and
 * batches, so the step loops turn many times: every row moves (or goes) once, the events keep their
 * write order, and nothing outside the stage is touched.
 */
describe.each(DIALECTS)('staged rows and held events in steps (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const actor = { user: 'test@auth.local', app: null };
  const base = () => ({ id: g.base.id, uuid: g.base.uuid });
  const rowsOf = async (table: string) =>
    t.container.db.selectFrom('base_rows').select(['row_id']).where('base_id', '=', g.base.id).where('table_id', '=', table).orderBy('id').execute();

  /** Writes `batches` staged batches of `size` rows named `prefix i` under a hold. */
  async function stagedBatches(hold: { id: string; stage: string }, prefix: string, batches: number, size: number) {
    for (let b = 0; b < batches; b++) {
      const rows = Array.from({ length: size }, (_, i) => ({ Name: `${prefix} ${b * size + i}` }));
      await t.container.baseData.rows.append(base(), actor, { table_id: tableId, rows }, hold);
    }
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Tasks', [{ column_name: 'Name', column_type: 'text' }]);
    tableId = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks')._id;
    await t.container.baseData.rows.append(base(), actor, { table_id: tableId, rows: [{ Name: 'kept' }] });
  }, 60_000);
  afterAll(() => t?.close());

  it('publishes 7 batches of 5 rows, 4 rows and 2 batches per statement: every row once, events in write order', async () => {
    const hold = { id: 'steps-publish', stage: 'Sp1' };
    await stagedBatches(hold, 'moved', 7, 5);
    expect(await rowsOf(`~Sp1${tableId}`)).toHaveLength(35);
    const moved = await t.container.db.transaction().execute(async (trx) => {
      expect(await publishStaged(trx, g.base.id, hold.stage, [tableId], 4)).toBe(35);
      return releaseHeldEvents(trx, dialect, hold.id, 2);
    });
    expect(moved).toBe(35);
    expect(await rowsOf(`~Sp1${tableId}`)).toEqual([]);
    expect(await rowsOf(tableId)).toHaveLength(36);
    const names = await t.container.db.selectFrom('events').select(['row_name', 'write_id']).where('base_id', '=', g.base.id).where('row_name', 'like', 'moved %').orderBy('id').execute();
    expect(names.map((e) => e.row_name)).toEqual(Array.from({ length: 35 }, (_, i) => `moved ${i}`));
    expect(new Set(names.map((e) => e.write_id)).size).toBe(7);
    expect(await t.container.db.selectFrom('held_event_batches').selectAll().where('hold_id', '=', hold.id).execute()).toEqual([]);
  });

  it('drops a stage of 23 rows 4 at a time, and only that stage', async () => {
    const other = { id: 'steps-other', stage: 'Ot2' };
    await stagedBatches(other, 'other', 1, 3);
    const hold = { id: 'steps-drop', stage: 'Dr3' };
    await stagedBatches(hold, 'dropped', 1, 23);
    await t.container.db.transaction().execute((trx) => dropStage(trx, g.base.id, hold.stage, 4));
    expect(await rowsOf(`~Dr3${tableId}`)).toEqual([]);
    expect(await rowsOf(`~Ot2${tableId}`)).toHaveLength(3);
    expect(await rowsOf(tableId)).toHaveLength(36);
    expect((await listRows(g, 'table_name=Tasks&limit=1&convert_keys=true'))[0]).toMatchObject({ Name: 'kept' });
  });
});
