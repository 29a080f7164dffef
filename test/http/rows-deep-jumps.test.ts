import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { RowIndexes } from '../../src/modules/rows/row-indexes.js';
import { JUMP_SET_BUILD_LOCK, jumpSetName } from '../../src/modules/rows/jump-sets.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, appWithTiedTable, tiedRows, type Gateway } from './rows.fixtures.js';

interface SeededTable {
  _id: string;
  name: string;
  columns: Array<{ key: string; name: string }>;
}

/**
 * Table T (Name, N, Label) with `listed` rows whose sort values tie, and `archivedPerBatch` archived rows
 * after every ten listed ones: their ids and sort values fall among the listed rows'.
 */
async function tiedTableWithArchived(dialect: (typeof DIALECTS)[number], listed: number, archivedPerBatch: number) {
  const { t, g } = await appWithTiedTable(dialect);
  const rows = tiedRows(listed);
  for (let i = 0; i < listed; i += 10) {
    await appendRows(g, 'T', rows.slice(i, i + 10));
    const archived = tiedRows(13).slice(i % 13, (i % 13) + archivedPerBatch).map((r, j) => ({ ...r, Name: `archived ${i}.${j}` }));
    const res = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: archived });
    expect(res.statusCode, res.body).toBe(200);
  }
  const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: SeededTable[] } }>();
  const table = meta.metadata.tables.find((x) => x.name === 'T')!;
  return { t, g, tableId: table._id, keys: Object.fromEntries(table.columns.map((c) => [c.name, c.key])) };
}

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
    ({ t, g, tableId } = await tiedTableWithArchived(dialect, LISTED, 3));
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

  const before = new Map<string, string[][]>();
  it('answers every jump as the listing did before its sort index, archived rows left out', async () => {
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
    // Built from the keys, not by replacing names in strings: a random key may itself contain "N".
    expect(kinds).toEqual([labelKey(), nKey()].flatMap((key) => [`${key}:asc`, `${key}:desc`]).sort());
    for (const query of QUERIES) expect(await jumps(query), query).toEqual(before.get(query));
  }, 240_000);

  let keys: Record<string, string> = {};
  const labelKey = () => keys.Label!;
  const nKey = () => keys.N!;
  beforeAll(async () => {
    const cols = (await g.call('GET', 'columns/?table_name=T')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    keys = Object.fromEntries(cols.map((c) => [c.name, c.key]));
  });

  if (dialect === 'postgres') {
    it('PostgreSQL: a deep jump finds the row before the page in the listing\'s jump set, index-only, and answers the same pages', async () => {
      indexes().options.positionSkip = 5;
      for (const query of QUERIES) await cold(query, 9, 1);
      await indexes().idle();
      const sets = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind === 'jumpset');
      expect(sets).toHaveLength(4);
      const ref = { id: g.base.id, uuid: g.base.uuid };
      const plan = await t.container.baseData.rows.explainJumpSet(ref, { table_name: 'T', order_by: 'N', start: 120, limit: 10 }, {});
      expect(plan).toMatch(/Index Only Scan using brj_/);
      for (const query of QUERIES) expect(await jumps(query), query).toEqual(before.get(query));
      // Past the end: an empty page, as before.
      expect(await cold('order_by=N', LISTED + 40, 5)).toEqual([]);
    }, 240_000);
  }

  // SQLite's sort indexes are partial; PostgreSQL's case is its jump sets (above).
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

/**
 * Cold jumps deep into *filtered* listings (issue 34): on SQLite a deep `start` into a listing filtered on
 * one column (sorted on at most one) goes through that filter's jump index (row-indexes.ts `noteJump`):
 * the filter's cell and JSON type, the sort and the id, listed rows only, so the rows before the page are
 * skipped in the index. Every jump answers what the listing answered before any index existed: filters
 * (equality, ranges, `or`, empty cells) × sorts (none, asc, desc, on the filtered column or another) ×
 * archived rows mixed in at every position (some matching the filters, with sort values tied to listed rows').
 */
describe.each(DIALECTS)('cold deep jumps into filtered listings (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string> = {};
  const LISTED = 150;

  beforeAll(async () => {
    ({ t, g, tableId, keys } = await tiedTableWithArchived(dialect, LISTED, 4));
  }, 120_000);
  afterAll(() => t.close());

  const FILTERS: Record<string, Record<string, unknown>> = {
    'Label is a': { filters: [{ column_name: 'Label', filter_predicate: 'is', filter_term: 'a' }] },
    'Label is B': { filters: [{ column_name: 'Label', filter_predicate: 'is', filter_term: 'B' }] },
    'N equal 0': { filters: [{ column_name: 'N', filter_predicate: 'equal', filter_term: 0 }] },
    'N greater 1': { filters: [{ column_name: 'N', filter_predicate: 'greater', filter_term: 1 }] },
    'N less -1 or equal 4': {
      filters: [
        { column_name: 'N', filter_predicate: 'less', filter_term: -1 },
        { column_name: 'N', filter_predicate: 'equal', filter_term: 4 },
      ],
      filter_conjunction: 'Or',
    },
    'Label is empty': { filters: [{ column_name: 'Label', filter_predicate: 'is_empty' }] },
  };
  const SORTS = ['', 'order_by=N', 'order_by=N&direction=desc', 'order_by=Label&direction=desc'];
  const indexes = () => t.container.baseData.indexes;
  const cold = async (filter: object, sort: string, start: number, limit: number) => {
    t.container.baseData.snapshots.evict(g.base.id);
    t.container.baseData.rows.positions.clear();
    const res = await g.call('POST', `filtered-rows/?table_name=T&convert_keys=true&${sort}&start=${start}&limit=${limit}`, filter);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  const jumps = async (filter: object, sort: string) => {
    const pages: string[][] = [];
    for (let start = 0; start <= 80; start += 3) pages.push(await cold(filter, sort, start, start % 2 === 0 ? 7 : 4));
    return pages;
  };

  it('answers every jump as the listing did before any row index, archived rows left out', async () => {
    const before = new Map<string, string[][]>();
    for (const [name, filter] of Object.entries(FILTERS)) for (const sort of SORTS) before.set(`${name}|${sort}`, await jumps(filter, sort));
    // Sanity of the reference: no archived row; the filters match some rows, deep enough to jump into.
    expect([...before.values()].flat(2).some((name) => name.startsWith('archived'))).toBe(false);
    expect(new Set(before.get('N greater 1|')!.flat()).size).toBeGreaterThan(40);
    expect(new Set(before.get('Label is a|')!.flat()).size).toBeGreaterThan(15);
    expect(await indexes().indexesOf(g.base.id, tableId)).toEqual([]);

    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    indexes().options.positionSkip = 5;
    for (const filter of Object.values(FILTERS)) for (const sort of SORTS) await cold(filter, sort, 9, 1);
    await indexes().idle();
    const jumpKinds = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind.startsWith('jump')).map((e) => `${e.column_key}:${e.kind}`);
    if (dialect === 'sqlite') {
      // One per filtered column and sort (the Label filters share theirs).
      const expected = ['N', 'Label'].flatMap((f) => ['jump', `jump:asc:${keys.N}`, `jump:desc:${keys.N}`, `jump:desc:${keys.Label}`].map((k) => `${keys[f]}:${k}`));
      expect(jumpKinds.sort()).toEqual(expected.sort());
    } else {
      // PostgreSQL: one jump set per filtered column and sort (jump-sets.ts).
      expect(jumpKinds.sort()).toEqual(['N', 'Label'].flatMap((f) => SORTS.map(() => `${keys[f]}:jumpset`)).sort());
      const plan = await t.container.baseData.rows.explainJumpSet({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'T', order_by: 'N', direction: 'desc', start: 12, limit: 3 }, {}, FILTERS['Label is a']);
      expect(plan).toMatch(/Index Only Scan using brj_/);
    }
    for (const [name, filter] of Object.entries(FILTERS)) for (const sort of SORTS) expect(await jumps(filter, sort), `${name} ${sort}`).toEqual(before.get(`${name}|${sort}`));
  }, 240_000);

  if (dialect === 'sqlite') {
    it('SQLite: a jump index holds only listed rows with the filter cell and its type, and a deep filtered jump reads it', async () => {
      const entries = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind.startsWith('jump'));
      expect(entries.length).toBeGreaterThan(0);
      for (const { name } of entries) {
        const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and name = ${name}`.execute(t.container.db);
        expect(rows[0]?.sql, name).toMatch(/json_type\("?data"?, '\$\."\w+"'\)\) where .*_archived/i);
      }
      const ref = { id: g.base.id, uuid: g.base.uuid };
      const rows = t.container.baseData.rows;
      const filter = FILTERS['Label is a']!;
      const unsorted = entries.find((e) => e.column_key === keys.Label && e.kind === 'jump')!.name;
      const sorted = entries.find((e) => e.column_key === keys.Label && e.kind === `jump:desc:${keys.N}`)!.name;
      const plan = await rows.explainList(ref, { table_name: 'T', start: 12, limit: 3 }, {}, filter);
      expect(plan).toContain(`USING INDEX ${unsorted}`);
      // Covering: the filter is checked on the index entries; the equality is a range of it, in id order.
      expect(plan).not.toMatch(/TEMP B-TREE/);
      const sortedPlan = await rows.explainList(ref, { table_name: 'T', order_by: 'N', direction: 'desc', start: 12, limit: 3 }, {}, filter);
      expect(sortedPlan).toContain(`USING INDEX ${sorted}`);
      expect(sortedPlan).not.toMatch(/TEMP B-TREE/);
      // A shallow start keeps the listing's usual plan (no jump index).
      expect(await rows.explainList(ref, { table_name: 'T', start: 2, limit: 3 }, {}, filter)).not.toContain(unsorted);
    });

    it('SQLite: jump indexes follow their columns (a deleted sort column drops those sorted on it)', async () => {
      const before = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind.startsWith('jump'));
      expect(before.some((e) => e.kind.endsWith(`:${keys.Label}`))).toBe(true);
      const res = await g.call('DELETE', 'columns/', { table_name: 'T', column: 'Label' });
      expect(res.statusCode, res.body).toBe(200);
      await indexes().idle();
      const after = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind.startsWith('jump'));
      expect(after.map((e) => e.kind).sort()).toEqual(['jump', `jump:asc:${keys.N}`, `jump:desc:${keys.N}`]);
      expect(after.every((e) => e.column_key === keys.N)).toBe(true);
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name like ${'bri_%jump%'}`.execute(t.container.db);
      expect(rows.map((r) => r.name).sort()).toEqual(after.map((e) => e.name).sort());
    });
  }
});

/**
 * PostgreSQL's jump sets (rows/jump-sets.ts) are a side table kept by a trigger: after appends, updates
 * (ties, emptied cells), archived rows, deletions, a rename, a type change and a deleted column, every
 * cold deep jump answers what the same listing answers with jump sets unused (`jumpReads` off).
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('jump sets follow writes and structure (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string> = {};
  const LISTED = 120;

  beforeAll(async () => {
    ({ t, g, tableId, keys } = await tiedTableWithArchived(dialect, LISTED, 2));
    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    indexes().options.positionSkip = 5;
  }, 120_000);
  afterAll(() => t.close());

  const indexes = () => t.container.baseData.indexes;
  const labelA = { filters: [{ column_name: 'Label', filter_predicate: 'is', filter_term: 'a' }] };
  const nBig = { filters: [{ column_name: 'N', filter_predicate: 'greater', filter_term: 1 }] };
  const LISTINGS: Array<[string, object | undefined]> = [
    ['order_by=N', undefined],
    ['order_by=Label&direction=desc', undefined],
    ['order_by=N&direction=desc', labelA],
    ['', labelA],
    ['', nBig],
    ['order_by=Label', nBig],
  ];
  const page = async (sort: string, filter: object | undefined, start: number, limit: number, jumpReads: boolean) => {
    indexes().options.jumpReads = jumpReads;
    t.container.baseData.snapshots.evict(g.base.id);
    t.container.baseData.rows.positions.clear();
    const path = `${filter ? 'filtered-rows' : 'rows'}/?table_name=T&convert_keys=true&${sort}&start=${start}&limit=${limit}`;
    const res = filter ? await g.call('POST', path, filter) : await g.call('GET', path);
    indexes().options.jumpReads = true;
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  /** Every listing's cold pages with and without its jump set. */
  const compare = async (what: string) => {
    let deep = 0;
    for (const [sort, filter] of LISTINGS) {
      for (let start = 6; start <= LISTED + 20; start += 7) {
        const expected = await page(sort, filter, start, 5, false);
        expect(await page(sort, filter, start, 5, true), `${what}: ${sort} ${JSON.stringify(filter)} start=${start}`).toEqual(expected);
        if (expected.length > 0) deep++;
      }
    }
    expect(deep).toBeGreaterThan(20);
  };
  const sets = async () => (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind === 'jumpset');
  const sideRows = async () => Number((await sql<{ n: string }>`select count(*) as n from row_jump_keys`.execute(t.container.db)).rows[0]!.n);

  it('builds one set per listing and answers as the listing does', async () => {
    for (const [sort, filter] of LISTINGS) await page(sort, filter, 9, 1, true);
    await indexes().idle();
    expect(await sets()).toHaveLength(LISTINGS.length);
    expect(await sideRows()).toBe(LISTINGS.length * LISTED);
    await compare('built');
  }, 240_000);

  it('reads an equality filter\'s deep jump as a range of the set\'s keyed index (value first), index-only', async () => {
    const ref = { id: g.base.id, uuid: g.base.uuid };
    const rows = t.container.baseData.rows;
    for (const sort of [{}, { order_by: 'N', direction: 'desc' }]) {
      const plan = (await rows.explainJumpSet(ref, { table_name: 'T', start: 12, limit: 3, ...sort }, {}, labelA))!;
      // The filter's value is the index's condition (no entry of another value is read), in the listing's order (no sort).
      expect(plan, JSON.stringify(sort)).toMatch(/Index Only Scan using brj_\w+_k on row_jump_keys/);
      expect(plan).toMatch(/Index Cond: .*'a'/);
      expect(plan).not.toMatch(/Sort/);
    }
    // A range filter reads its range of the keyed index too (then sorted), or the ordered index.
    expect(await rows.explainJumpSet(ref, { table_name: 'T', start: 12, limit: 3 }, {}, nBig)).toMatch(/Index Only Scan using brj_/);
  });

  it('follows appends, updates, archived rows and deletions', async () => {
    await appendRows(g, 'T', tiedRows(30).map((r, i) => ({ ...r, Name: `late ${i}` })));
    const listed = await g.call('GET', 'rows/?table_name=T&convert_keys=true&limit=1000');
    const ids = listed.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id);
    // Ties, emptied cells and moved values; some rows deleted; more archived rows.
    const updates = ids.slice(0, 40).map((row_id, i) => ({ row_id, row: i % 4 === 0 ? { N: null, Label: null } : { N: (i % 3) - 1, Label: i % 2 ? 'a' : 'Z' } }));
    expect((await g.call('PUT', 'rows/', { table_name: 'T', updates })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: ids.slice(50, 70) })).statusCode).toBe(200);
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: tiedRows(12).map((r, i) => ({ ...r, Name: `archived late ${i}` })) });
    expect(archived.statusCode, archived.body).toBe(200);
    expect(await sideRows()).toBe(LISTINGS.length * (LISTED + 30 - 20));
    await compare('after writes');
  }, 240_000);

  it('follows a rename (kept), a type change and a deleted column (dropped with their rows)', async () => {
    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'T', ...body });
    const before = (await sets()).map((e) => e.name).sort();
    expect((await put({ op_type: 'rename_column', column: 'Label', new_column_name: 'Tag' })).statusCode).toBe(200);
    await indexes().idle();
    expect((await sets()).map((e) => e.name).sort()).toEqual(before);
    // N becomes text: the sets sorting or filtering on N as a number are dropped, with their rows.
    expect((await put({ op_type: 'rename_column', column: 'Tag', new_column_name: 'Label' })).statusCode).toBe(200);
    expect((await put({ op_type: 'modify_column_type', column: 'N', new_column_type: 'text' })).statusCode).toBe(200);
    await indexes().idle();
    // (kept: sorted on Label, and filtered on Label unsorted)
    expect(await sets()).toHaveLength(2);
    expect(await sideRows()).toBe(2 * (LISTED + 30 - 20));
    // The listings on N as text build new sets and answer as before.
    for (const [sort, filter] of LISTINGS) if (filter !== nBig) await page(sort, filter, 9, 1, true);
    await indexes().idle();
    expect(await sets()).toHaveLength(4);
    for (const [sort, filter] of LISTINGS.filter(([, f]) => f !== nBig)) {
      for (const start of [6, 40, 90]) expect(await page(sort, filter, start, 5, true), `${sort} ${start}`).toEqual(await page(sort, filter, start, 5, false));
    }
    // Label deleted: every set on it goes, with its rows and definition.
    expect((await g.call('DELETE', 'columns/', { table_name: 'T', column: 'Label' })).statusCode).toBe(200);
    await indexes().idle();
    const left = await sets();
    expect(left).toHaveLength(1);
    expect(await sideRows()).toBe(LISTED + 30 - 20);
    const defs = await sql<{ name: string }>`select name from row_jump_defs`.execute(t.container.db);
    expect(defs.rows.map((r) => r.name)).toEqual(left.map((e) => e.name));
    const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = current_schema() and indexname like 'brj_%'`.execute(t.container.db);
    expect(rows.map((r) => r.indexname)).toEqual(left.map((e) => e.name));
  }, 240_000);

  it('a set built while rows are appended, updated and deleted answers as the listing does', async () => {
    const listed = await g.call('GET', 'rows/?table_name=T&convert_keys=true&limit=1000');
    const ids = listed.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id);
    let building = true;
    const writes = (async () => {
      for (let i = 0; (building || i < 10) && i < 250; i++) {
        await appendRows(g, 'T', [{ Name: `during ${i}`, N: String(i % 4) }]);
        const res = await g.call('PUT', 'rows/', { table_name: 'T', updates: [{ row_id: ids[(i * 7) % 60]!, row: { Name: `moved ${i}` } }] });
        expect(res.statusCode, res.body).toBe(200);
        if (i % 5 === 0) expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: [ids[70 + i / 5]!] })).statusCode).toBe(200);
      }
    })();
    await page('order_by=Name&direction=desc', undefined, 9, 1, true);
    await indexes().idle();
    building = false;
    await writes;
    expect((await sets()).length).toBe(2);
    for (let start = 6; start <= 140; start += 9) {
      expect(await page('order_by=Name&direction=desc', undefined, start, 5, true), `start=${start}`).toEqual(await page('order_by=Name&direction=desc', undefined, start, 5, false));
    }
  }, 240_000);
  it('copies a set in batches: a write issued between two batches completes before the build does', async () => {
    const listing = 'order_by=Name';
    const events: string[] = [];
    const before = await sets();
    indexes().options.jumpSetBatch = 20;
    indexes().onJumpSetBatch = async (batch) => {
      if (batch !== 0) return;
      // A write to the same base while the set is half copied (the old build held the base's write lock throughout).
      const write = (async () => {
        const ids = await appendRows(g, 'T', [{ Name: 'written mid-build', N: '2' }]);
        const res = await g.call('PUT', 'rows/', { table_name: 'T', updates: [{ row_id: ids[0]!, row: { Name: 'aa updated mid-build' } }] });
        expect(res.statusCode, res.body).toBe(200);
        events.push('write');
      })();
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([write, timeout]);
      events.push('batch 0 done waiting');
    };
    try {
      await page(listing, undefined, 9, 1, true);
      await indexes().idle();
    } finally {
      indexes().onJumpSetBatch = undefined;
      indexes().options.jumpSetBatch = 5_000;
    }
    events.push('built');
    expect(events).toEqual(['write', 'batch 0 done waiting', 'built']);
    expect(await sets()).toHaveLength(before.length + 1);
    for (let start = 6; start <= 140; start += 9) {
      expect(await page(listing, undefined, start, 5, true), `start=${start}`).toEqual(await page(listing, undefined, start, 5, false));
    }
    const name = jumpSetName(g.base.id, tableId, { sort: { key: keys.Name!, valueType: 'text', desc: false } });
    const updated = await sql<{ n: string }>`select count(*) as n from row_jump_keys k join row_jump_defs d on d.id = k.jump_id where d.name = ${name} and k.txt = 'aa updated mid-build'`.execute(t.container.db);
    expect(Number(updated.rows[0]!.n)).toBe(1);
  }, 240_000);

  it('drops what a crashed build left (a definition the trigger fills, never registered), but not a build under way', async () => {
    const db = t.container.db;
    const use = { filter: { key: keys.Name!, valueType: 'text' as const } };
    const name = jumpSetName(g.base.id, tableId, use);
    const defs = async () => (await sql<{ id: string }>`select id from row_jump_defs where name = ${name}`.execute(db)).rows;
    // A crashed build: its definition and part of its rows, no index, no row_indexes entry.
    await sql`insert into row_jump_defs (name, base_id, table_id, filter_key, filter_type, descending) values (${name}, ${g.base.id}, ${tableId}, ${keys.Name!}, 'text', false)`.execute(db);
    const id = (await defs())[0]!.id;
    await sql`insert into row_jump_keys (jump_id, id, num, txt, data) select ${id}, id, null, null, '{}'::jsonb from base_rows where base_id = ${g.base.id} and table_id = ${tableId} order by id limit 30`.execute(db);
    const keysOf = async () => Number((await sql<{ n: string }>`select count(*) as n from row_jump_keys where jump_id = ${id}`.execute(db)).rows[0]!.n);
    await appendRows(g, 'T', [{ Name: 'after the crash', N: '1' }]);
    expect(await keysOf()).toBe(31); // the trigger keeps filling it

    // Another process still building it (holding the build lock): left alone.
    const other = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock($1, hashtext($2))', [JUMP_SET_BUILD_LOCK, name]);
      expect(await indexes().recoverJumpSets()).toEqual([]);
      expect(await defs()).toHaveLength(1);
      await other.query('select pg_advisory_unlock($1, hashtext($2))', [JUMP_SET_BUILD_LOCK, name]);
    } finally {
      await other.end();
    }

    // A restart: the registry's first look at the entries finds the definition and drops it, with its rows.
    const restarted = new RowIndexes(db, 'postgres', () => Date.now());
    await restarted.indexesOf(g.base.id, tableId);
    await restarted.idle();
    expect(await defs()).toEqual([]);
    expect(await keysOf()).toBe(0);
    const { rows } = await sql<{ n: string }>`select count(*) as n from pg_indexes where indexname like ${`${name}%`}`.execute(db);
    expect(Number(rows[0]!.n)).toBe(0);

    // Crashed again; a structural commit (reconcile) drops it too.
    await sql`insert into row_jump_defs (name, base_id, table_id, filter_key, filter_type, descending) values (${name}, ${g.base.id}, ${tableId}, ${keys.Name!}, 'text', false)`.execute(db);
    await appendRows(g, 'T', [{ Name: 'after the second crash', N: '1' }]);
    expect((await g.call('PUT', 'columns/', { table_name: 'T', op_type: 'rename_column', column: 'N', new_column_name: 'N2' })).statusCode).toBe(200);
    await indexes().idle();
    expect(await defs()).toEqual([]);
    expect((await g.call('PUT', 'columns/', { table_name: 'T', op_type: 'rename_column', column: 'N2', new_column_name: 'N' })).statusCode).toBe(200);

    // The listing builds its set anew and answers as without it.
    const byName = { filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'a' }] };
    await page('', byName, 9, 1, true);
    await indexes().idle();
    expect(await defs()).toHaveLength(1);
    for (let start = 6; start <= 100; start += 9) expect(await page('', byName, start, 5, true), `start=${start}`).toEqual(await page('', byName, start, 5, false));
  }, 240_000);

});

/**
 * Migration 0050 (PostgreSQL): inserted rows reach the jump sets through one statement trigger per
 * INSERT, not a trigger call per row (the per-row call cost a 10,000,000-row import about a third of its
 * database time), and the entries it writes are those the row trigger wrote.
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('jump set entries of inserted rows, per statement (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string>;

  beforeAll(async () => {
    ({ t, g } = await appWithGateway(dialect));
    await addTable(g, 'Tasks', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
      { column_name: 'Kind', column_type: 'text' },
    ]);
    const table = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks');
    tableId = table._id;
    keys = Object.fromEntries(table.columns.map((c: { name: string; key: string }) => [c.name, c.key]));
    // Two sets of the table: sorted on Points filtered on Kind, and one keeping named cells (0047).
    await sql`insert into row_jump_defs (name, base_id, table_id, filter_key, filter_type, sort_key, sort_type, descending)
              values ('jk_one', ${g.base.id}, ${tableId}, ${keys.Kind}, 'text', ${keys.Points}, 'number', false)`.execute(t.container.db);
    await sql`insert into row_jump_defs (name, base_id, table_id, sort_key, sort_type, descending, cells)
              values ('jk_many', ${g.base.id}, ${tableId}, ${keys.Name}, 'text', true, ${sql.raw(`ARRAY['${keys.Name}', '${keys.Kind}']`)})`.execute(t.container.db);
  }, 60_000);
  afterAll(() => t?.close());

  it('one append writes every set entry of its rows, as the row trigger did', async () => {
    await appendRows(g, 'Tasks', [{ Name: 'a', Points: 3, Kind: 'x' }, { Name: 'b', Kind: 'y' }, { Points: 7 }]);
    const entries = await sql<{ name: string; row_id: string; num: number | null; txt: string | null; data: unknown }>`
      select d.name, r.row_id, k.num, k.txt, k.data from row_jump_keys k join row_jump_defs d on d.id = k.jump_id
        join base_rows r on r.id = k.id where d.base_id = ${g.base.id} order by d.name, r.id`.execute(t.container.db);
    expect(entries.rows.map(({ row_id: _, ...e }) => e)).toEqual([
      { name: 'jk_many', num: null, txt: 'a', data: { [keys.Name!]: 'a', [keys.Kind!]: 'x' } },
      { name: 'jk_many', num: null, txt: 'b', data: { [keys.Name!]: 'b', [keys.Kind!]: 'y' } },
      { name: 'jk_many', num: null, txt: null, data: {} },
      { name: 'jk_one', num: 3, txt: null, data: { [keys.Kind!]: 'x' } },
      { name: 'jk_one', num: null, txt: null, data: { [keys.Kind!]: 'y' } },
      { name: 'jk_one', num: 7, txt: null, data: {} },
    ]);
  });

  it('a multi-row INSERT calls the jump trigger once, not once per row; archived rows get no entry', async () => {
    const calls = await t.container.db.transaction().execute(async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx);
      await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
                select ${g.base.id}, ${tableId}, 'jk' || g, jsonb_build_object(${keys.Points}::text, g, '_archived', g = 50), 0, 0, 'u', 'u'
                from generate_series(1, 50) g`.execute(trx);
      const counted = await sql<{ per_row: string | null; per_statement: string | null; entries: string }>`
        select pg_stat_get_xact_function_calls('base_rows_jump_keys'::regproc) as per_row,
               pg_stat_get_xact_function_calls('base_rows_jump_keys_inserted'::regproc) as per_statement,
               (select count(*) from row_jump_keys k join base_rows r on r.id = k.id where r.row_id like 'jk%') as entries`.execute(trx);
      return counted.rows[0]!;
    });
    // Two sets × 49 rows (the archived one is left out, as the row trigger did).
    expect({ perRow: Number(calls.per_row ?? 0), perStatement: Number(calls.per_statement), entries: Number(calls.entries) }).toEqual({ perRow: 0, perStatement: 1, entries: 98 });
  });
});
