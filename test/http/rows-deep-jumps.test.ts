import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowIndexes } from '../../src/modules/rows/row-indexes.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, tiedRows, type Gateway } from './rows.fixtures.js';

/**
 * Cold jumps deep into sorted listings (issue 34): nothing known before the jump, so the rows before
 * `start` are skipped in the sort index. On SQLite the sort indexes leave archived rows out (partial on
 * the listings' "not archived" term), so the skip reads index entries only. Every jump answers exactly
 * what the same listing answered before any index existed, with archived rows (some with sort values
 * equal to listed rows', some empty) mixed in at every position. "Big" is lowered to 100 rows here.
 */
describe.each(DIALECTS)('cold deep jumps into sorted listings (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const LISTED = 150;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' }, [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'N', column_type: 'number' },
      { column_name: 'Label', column_type: 'text' },
    ]));
    const rows = tiedRows(LISTED);
    // Archived rows between every batch of listed ones: their ids and sort values fall among the listed rows'.
    for (let i = 0; i < LISTED; i += 10) {
      await appendRows(g, 'T', rows.slice(i, i + 10));
      const archived = tiedRows(13).slice(i % 13, (i % 13) + 3).map((r, j) => ({ ...r, Name: `archived ${i}.${j}` }));
      const res = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: archived });
      expect(res.statusCode, res.body).toBe(200);
    }
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>();
    tableId = meta.metadata.tables.find((x) => x.name === 'T')!._id;
  }, 120_000);
  afterAll(() => t.close());

  const QUERIES = ['order_by=N', 'order_by=N&direction=desc', 'order_by=Label', 'order_by=Label&direction=desc'];
  const indexes = () => t.container.baseData.indexes;
  /** A page with nothing known before it: page cache and remembered page ends dropped. */
  const cold = async (query: string, start: number, limit: number) => {
    t.container.baseData.snapshots.evict(g.base.id);
    t.container.baseData.rows.positions.clear();
    const res = await g.call('GET', `rows/?table_name=T&convert_keys=true&${query}&start=${start}&limit=${limit}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  const jumps = async (query: string) => {
    const pages: string[][] = [];
    for (let start = 0; start <= LISTED + 2; start += 2) pages.push(await cold(query, start, start % 3 === 0 ? 7 : 3));
    return pages;
  };

  it('answers every jump as the listing did before its sort index, archived rows left out', async () => {
    const before = new Map<string, string[][]>();
    for (const query of QUERIES) before.set(query, await jumps(query));
    // Sanity of the reference: no archived row, every listed row once.
    const all = before.get('order_by=N')!.filter((_, start) => start % 7 === 0 && start % 3 === 0);
    expect(all.flat().some((name) => name.startsWith('archived'))).toBe(false);
    expect(new Set(before.get('order_by=Label')!.flat()).size).toBe(LISTED);
    expect(await indexes().indexesOf(g.base.id, tableId)).toEqual([]);

    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    for (const query of QUERIES) await cold(query, 0, 1);
    await indexes().idle();
    const kinds = (await indexes().indexesOf(g.base.id, tableId)).map((e) => `${e.column_key}:${e.kind}`).sort();
    expect(kinds).toEqual(['Label:asc', 'Label:desc', 'N:asc', 'N:desc'].map((k) => k.replace('Label', labelKey()).replace('N', nKey())).sort());
    for (const query of QUERIES) expect(await jumps(query), query).toEqual(before.get(query));
  }, 240_000);

  let keys: Record<string, string> = {};
  const labelKey = () => keys.Label!;
  const nKey = () => keys.N!;
  beforeAll(async () => {
    const cols = (await g.call('GET', 'columns/?table_name=T')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    keys = Object.fromEntries(cols.map((c) => [c.name, c.key]));
  });

  // SQLite's sort indexes are partial; PostgreSQL has no such index to inspect (its case is the jumps above).
  if (dialect === 'sqlite') {
    it('SQLite: the sort indexes hold only listed rows, and a deep jump reads one', async () => {
      const names = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind === 'asc' || e.kind === 'desc').map((e) => e.name);
      expect(names).toHaveLength(4);
      for (const name of names) {
        const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and name = ${name}`.execute(t.container.db);
        expect(rows[0]?.sql, name).toMatch(/where .*_archived/i);
      }
      const plan = await t.container.baseData.rows.explainList({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'T', order_by: 'N', start: 120, limit: 10 }, {});
      expect(plan).toMatch(new RegExp(names.find((n) => n.includes('_asc'))!));
    });

    it('SQLite: a sort index of the older definition (archived rows in it) is never read, and replaced', async () => {
      const db = t.container.db;
      const current = (await indexes().indexesOf(g.base.id, tableId)).find((e) => e.kind === 'asc' && e.column_key === nKey())!;
      const old = current.name.replace('_ascl_', '_asc_');
      expect(old).not.toBe(current.name);
      // As a database built before holds it: the old name and definition, no index of the current one.
      await sql.raw(`drop index "${current.name}"`).execute(db);
      await db.deleteFrom('row_indexes').where('name', '=', current.name).execute();
      await sql.raw(`create index "${old}" on base_rows ((json_extract(data, '$.${nKey()}') is null), json_extract(data, '$.${nKey()}'), id) where base_id = ${g.base.id} and table_id = '${tableId}'`).execute(db);
      await db.insertInto('row_indexes').values({ ...current, name: old, created_at: Date.now() }).execute();
      const restarted = new RowIndexes(db, dialect, () => Date.now(), { ...indexes().options });
      expect((await restarted.indexesOf(g.base.id, tableId)).map((e) => e.name)).toContain(old);
      // A listing sorted on N is not sent to it…
      expect(await restarted.hint(g.base.id, tableId, [], { key: nKey(), desc: false })).toBeUndefined();
      // …and its use builds the current one, dropping the old.
      const column = { key: nKey(), type: 'number' };
      restarted.note(g.base.id, { _id: tableId, columns: [column] }, [{ column, kind: 'asc' }]);
      await restarted.idle();
      const names = (await restarted.indexesOf(g.base.id, tableId)).map((e) => e.name);
      expect(names).toContain(current.name);
      expect(names).not.toContain(old);
      expect(await restarted.hint(g.base.id, tableId, [], { key: nKey(), desc: false })).toBe(current.name);
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name in (${old}, ${current.name})`.execute(db);
      expect(rows.map((r) => r.name)).toEqual([current.name]);
    });
  }
});
