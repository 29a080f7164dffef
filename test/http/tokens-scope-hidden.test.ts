import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase } from '../helpers/index.js';
import { scopeCalls } from './scope.fixtures.js';

// Issue 33: what a token scoped to Table1 must not read of the table Secret beyond the row listings that
// tokens-scopes-links.test.ts covers: archived rows (read through SQL) with links and lookups to Secret,
// a view whose own filters or sorts use such a column (its rows and order would show the hidden cells:
// listing it is 403 naming Secret), and the structure (metadata/, columns/, views/: no column that
// reaches Secret, no view setting naming one, so neither Secret's id nor a filter term about it shows).

describe.each(DIALECTS)('columns hidden by a table scope, beyond the row listings (%s)', (dialect) => {
  let t: TestApp;
  let base: TestBase;
  const ids = { secret: '', secretRow: '', archived: '', secretLink: '', lookup: '', live: '' };
  const tokens: Record<string, string> = {};
  const CLASSIFIED = 'classified-value';
  /** A filter term only the view's settings hold: it says what the view looks for in Secret. */
  const TERM = 'needle-in-secret';

  const { gw, ok, refused } = scopeCalls(() => ({ t, base, secret: ids.secret }));
  const nothingOfSecret = (body: string) => {
    expect(body).not.toContain(CLASSIFIED);
    expect(body).not.toContain(TERM);
    expect(body).not.toContain(ids.secret);
    expect(body).not.toContain(ids.secretRow);
    expect(body).not.toContain(`"${ids.secretLink}"`);
    expect(body).not.toContain(`"${ids.lookup}"`);
    expect(body).not.toContain('Secret link');
    expect(body).not.toContain('Secret names');
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    base = await createBase(t, owner, 'Hidden columns base');
    const own = await baseToken(t, owner, base);
    tokens.own = own;
    await ok(gw(own, 'POST', 'tables/', { table_name: 'Secret' }));
    ids.secret = JSON.parse(await ok(gw(own, 'GET', 'metadata/'))).metadata.tables.find((x: { name: string }) => x.name === 'Secret')._id;
    const column = async (payload: object) => JSON.parse(await ok(gw(own, 'POST', 'columns/', { table_name: 'Table1', ...payload })));
    const secretLink = await column({ column_name: 'Secret link', column_type: 'link', column_data: { table: 'Table1', other_table: 'Secret' } });
    ids.secretLink = secretLink.key;
    ids.lookup = (await column({ column_name: 'Secret names', column_type: 'link-formula', column_data: { link_column_key: secretLink.key, formula: 'lookup', level1_linked_column_key: 'Name' } })).key;
    const append = async (table_name: string, Name: string) => JSON.parse(await ok(gw(own, 'POST', 'rows/', { table_name, rows: [{ Name }] }))).row_ids[0]._id as string;
    const live = await append('Table1', 'live-row');
    ids.live = live;
    await append('Table1', 'other-row');
    ids.secretRow = await append('Secret', CLASSIFIED);
    // An archived row of Table1, linked to Secret's row like the live one.
    await ok(gw(own, 'POST', 'add-archived-rows/', { table_name: 'Table1', rows: [{ Name: 'archived-row' }] }));
    const found = JSON.parse(await ok(gw(own, 'POST', 'sql/', { sql: "SELECT _id FROM Table1 WHERE Name = 'archived-row'" }))) as { results: Array<{ _id: string }> };
    ids.archived = found.results[0]!._id;
    await ok(gw(own, 'POST', 'links/', { link_id: secretLink.data.link_id, table_name: 'Table1', other_table_name: 'Secret', other_rows_ids_map: { [live]: [ids.secretRow], [ids.archived]: [ids.secretRow] } }));
    // Views of Table1: filtered on the lookup (its term names what it seeks in Secret), sorted by it, and a plain one.
    await ok(gw(own, 'POST', 'views/?table_name=Table1', { name: 'Spy', filters: [{ column_key: ids.lookup, filter_predicate: 'has_any_of', filter_term: [TERM] }] }));
    await ok(gw(own, 'POST', 'views/?table_name=Table1', { name: 'Spy sort', sorts: [{ column_key: ids.lookup, sort_type: 'down' }], hidden_columns: [ids.secretLink] }));
    await ok(gw(own, 'POST', 'views/?table_name=Table1', { name: 'Plain', filters: [{ column_key: '0000', filter_predicate: 'contains', filter_term: 'row' }], sorts: [{ column_key: '0000', sort_type: 'up' }] }));
    for (const [app_name, scope] of Object.entries({ table1: { tables: ['Table1'] }, unscoped: {} })) {
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name, permission: 'r', ...scope } });
      tokens[app_name] = (await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token })).json().access_token;
    }
  });
  afterAll(() => t.close());

  it('leaves links and lookups to Secret out of archived rows read through SQL', async () => {
    for (const sql of ['SELECT * FROM Table1', "SELECT * FROM Table1 WHERE Name = 'archived-row'"]) {
      for (const convert_keys of [true, false]) {
        const body = await ok(gw(tokens.table1!, 'POST', 'sql/', { sql, convert_keys }));
        expect(body).toContain(ids.archived);
        nothingOfSecret(body);
      }
    }
    // The control: an unscoped token reads the archived row's link and lookup.
    const control = JSON.parse(await ok(gw(tokens.unscoped!, 'POST', 'sql/', { sql: "SELECT * FROM Table1 WHERE Name = 'archived-row'", convert_keys: true }))) as { results: Array<Record<string, unknown>> };
    expect(JSON.stringify(control.results)).toContain(CLASSIFIED);
    expect(JSON.stringify(control.results)).toContain(ids.secretRow);
  });

  it("refuses listing a view whose own filters or sorts use a hidden column, naming Secret; other views list", async () => {
    await refused(gw(tokens.table1!, 'GET', 'rows/?table_name=Table1&view_name=Spy'));
    await refused(gw(tokens.table1!, 'GET', `rows/?table_name=Table1&view_name=${encodeURIComponent('Spy sort')}`));
    await refused(gw(tokens.table1!, 'POST', 'filtered-rows/?table_name=Table1&view_name=Spy', { filters: [] }));
    await refused(gw(tokens.table1!, 'POST', `filtered-rows/?table_name=Table1&view_name=${encodeURIComponent('Spy sort')}`, { filters: [] }));
    // The request's own sort replaces the view's: nothing hidden is then used.
    const resorted = await ok(gw(tokens.table1!, 'GET', `rows/?table_name=Table1&view_name=${encodeURIComponent('Spy sort')}&order_by=Name`));
    expect(resorted).toContain('live-row');
    nothingOfSecret(resorted);
    const plain = await ok(gw(tokens.table1!, 'GET', 'rows/?table_name=Table1&view_name=Plain&convert_keys=true'));
    expect(JSON.parse(plain).rows.map((r: { Name: string }) => r.Name)).toEqual(['live-row', 'other-row']);
    nothingOfSecret(plain);
    // The control: an unscoped token lists the views.
    expect(await ok(gw(tokens.unscoped!, 'GET', 'rows/?table_name=Table1&view_name=Spy'))).toContain('"rows"');
    expect(await ok(gw(tokens.unscoped!, 'GET', `rows/?table_name=Table1&view_name=${encodeURIComponent('Spy sort')}`))).toContain(CLASSIFIED);
  });

  it("counts in a row's activities/ only what the scope lets it read (total_count counts the operations it lists)", async () => {
    type Activities = { activities: Array<{ op_type: string }>; total_count: number };
    const read = async (token: string, row: string) => JSON.parse(await ok(gw(token, 'GET', `activities/?row_id=${row}`))) as Activities;
    // The live row: its append is listed, its link to Secret's row (a change of the hidden link column only) is not.
    const scoped = await read(tokens.table1!, ids.live);
    expect(scoped.activities.map((a) => a.op_type)).toEqual(['insert_row']);
    expect(scoped.total_count).toBe(1);
    nothingOfSecret(JSON.stringify(scoped));
    // Secret's row: nothing, and no count of what happened to it.
    expect(await read(tokens.table1!, ids.secretRow)).toEqual({ activities: [], total_count: 0 });
    // The control: an unscoped token sees and counts the link change, and Secret's row.
    const control = await read(tokens.unscoped!, ids.live);
    expect(control.total_count).toBe(2);
    // (total_count counts operations: the link's holds two entries, the link and the lookup it refreshed.)
    expect(control.activities.map((a) => a.op_type)).toEqual(['add_link', 'modify_row', 'insert_row']);
    expect((await read(tokens.unscoped!, ids.secretRow)).total_count).toBeGreaterThan(0);
  });

  it('shows no column that reaches Secret, and no view setting naming one, in metadata/, columns/ and views/', async () => {
    const reads = ['metadata/', 'columns/?table_name=Table1', 'columns/?table_name=Table1&view_name=Spy', 'views/?table_name=Table1', 'views/Spy/?table_name=Table1', `views/${encodeURIComponent('Spy sort')}/?table_name=Table1`];
    for (const path of reads) {
      const body = await ok(gw(tokens.table1!, 'GET', path));
      expect(body, path).toContain(path.startsWith('views/') ? '"name"' : '"Name"');
      nothingOfSecret(body);
    }
    const views = JSON.parse(await ok(gw(tokens.table1!, 'GET', 'views/?table_name=Table1'))).views as Array<{ name: string; filters: unknown[]; sorts: unknown[]; hidden_columns: unknown[] }>;
    expect(views.find((v) => v.name === 'Spy')).toMatchObject({ filters: [], sorts: [] });
    expect(views.find((v) => v.name === 'Spy sort')).toMatchObject({ sorts: [], hidden_columns: [] });
    expect(views.find((v) => v.name === 'Plain')!.filters).toHaveLength(1);
    // The control: the owner's views hold the term and the link column.
    const control = await ok(gw(tokens.unscoped!, 'GET', 'views/?table_name=Table1'));
    expect(control).toContain(TERM);
    expect(await ok(gw(tokens.unscoped!, 'GET', 'metadata/'))).toContain(ids.secret);
  });
});
