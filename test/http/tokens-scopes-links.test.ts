import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase } from '../helpers/index.js';
import { scopeCalls } from './scope.fixtures.js';

// Issue 33: a token scoped to Table1 reads none of Secret's data through Table1's links: link cells to
// Secret and the link formulas over them are left out of rows, filtered rows, a row and SQL; naming them
// (a filter, a sort, query-links/) is 403 naming Secret. Links inside the scope stay.

describe.each(DIALECTS)('links that leave a table scope (%s)', (dialect) => {
  let t: TestApp;
  let base: TestBase;
  const ids = { secret: '', row: '', secretRow: '', otherRow: '', secretLink: '', selfLink: '', lookup: '', echo: '', echo2: '', plain: '' };
  const tokens: Record<string, string> = {};
  const CLASSIFIED = 'classified-value';

  const { gw, ok, refused } = scopeCalls(() => ({ t, base, secret: ids.secret }));

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    base = await createBase(t, owner, 'Link scope base');
    const own = await baseToken(t, owner, base);
    await ok(gw(own, 'POST', 'tables/', { table_name: 'Secret' }));
    ids.secret = JSON.parse(await ok(gw(own, 'GET', 'metadata/'))).metadata.tables.find((x: { name: string }) => x.name === 'Secret')._id;
    const column = async (payload: object) => JSON.parse(await ok(gw(own, 'POST', 'columns/', { table_name: 'Table1', ...payload })));
    const secretLink = await column({ column_name: 'Secret link', column_type: 'link', column_data: { table: 'Table1', other_table: 'Secret' } });
    const selfLink = await column({ column_name: 'Self link', column_type: 'link', column_data: { table: 'Table1', other_table: 'Table1' } });
    ids.secretLink = secretLink.key;
    ids.selfLink = selfLink.key;
    ids.lookup = (await column({ column_name: 'Secret names', column_type: 'link-formula', column_data: { link_column_key: secretLink.key, formula: 'lookup', level1_linked_column_key: 'Name' } })).key;
    // Plain formulas over the lookup (and over such a formula) show Secret's cells too; one over Name does not.
    ids.echo = (await column({ column_name: 'Secret echo', column_type: 'formula', column_data: { formula: '{Secret names}' } })).key;
    ids.echo2 = (await column({ column_name: 'Echo again', column_type: 'formula', column_data: { formula: 'concatenate({Secret echo}, "!")' } })).key;
    ids.plain = (await column({ column_name: 'Plain', column_type: 'formula', column_data: { formula: 'concatenate({Name}, "?")' } })).key;
    const append = async (table_name: string, Name: string) => JSON.parse(await ok(gw(own, 'POST', 'rows/', { table_name, rows: [{ Name }] }))).row_ids[0]._id as string;
    ids.row = await append('Table1', 'visible');
    ids.otherRow = await append('Table1', 'neighbour');
    ids.secretRow = await append('Secret', CLASSIFIED);
    await ok(gw(own, 'POST', 'links/', { link_id: secretLink.data.link_id, table_name: 'Table1', other_table_name: 'Secret', other_rows_ids_map: { [ids.row]: [ids.secretRow] } }));
    await ok(gw(own, 'POST', 'links/', { link_id: selfLink.data.link_id, table_name: 'Table1', other_table_name: 'Table1', other_rows_ids_map: { [ids.row]: [ids.otherRow] } }));
    for (const [app_name, scope] of Object.entries({ by_name: { tables: ['Table1'] }, unscoped: {} })) {
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name, permission: 'r', ...scope } });
      tokens[app_name] = (await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token })).json().access_token;
    }
  });
  afterAll(() => t.close());

  const reads = () => [
    gw(tokens.by_name!, 'GET', 'rows/?table_name=Table1'),
    gw(tokens.by_name!, 'GET', 'rows/?table_name=Table1&convert_keys=true'),
    gw(tokens.by_name!, 'GET', `rows/${ids.row}/?table_name=Table1`),
    gw(tokens.by_name!, 'POST', 'filtered-rows/?table_name=Table1', { filters: [] }),
    gw(tokens.by_name!, 'POST', 'sql/', { sql: 'SELECT * FROM Table1', convert_keys: true }),
  ];

  it("leaves links to tables outside the scope, and formulas over them, out of every row it reads", async () => {
    for (const res of reads()) {
      const body = await ok(res);
      expect(body).toContain('visible');
      expect(body).not.toContain(CLASSIFIED);
      expect(body).not.toContain(ids.secretRow);
      expect(body).not.toContain('Secret link');
      expect(body).not.toContain(`"${ids.lookup}"`);
      expect(body).not.toContain('Secret echo');
      expect(body).not.toContain(`"${ids.echo}"`);
      expect(body).not.toContain(`"${ids.echo2}"`);
      expect(body).not.toContain('Echo again');
      // The link inside the scope stays, and a formula over the row's own cells.
      expect(body).toContain(ids.otherRow);
      expect(body).toContain('visible?');
    }
    // An unscoped token reads them (the control).
    expect(await ok(gw(tokens.unscoped!, 'GET', `rows/${ids.row}/?table_name=Table1&convert_keys=true`))).toContain(CLASSIFIED);
    expect(await ok(gw(tokens.unscoped!, 'POST', 'sql/', { sql: 'SELECT * FROM Table1', convert_keys: true }))).toContain(CLASSIFIED);
  });

  it("keeps a table-scoped token's cached pages apart from an unscoped token's, whichever lists first", async () => {
    const listings: Array<[method: 'GET' | 'POST', path: string, body?: object]> = [
      ['GET', 'rows/?table_name=Table1&convert_keys=true'],
      ['POST', 'filtered-rows/?table_name=Table1&convert_keys=true', { filters: [] }],
    ];
    for (const order of [['unscoped', 'by_name'], ['by_name', 'unscoped']]) {
      t.container.baseData.snapshots.evict(base.id);
      for (const who of order) {
        for (const [method, path, body] of listings) {
          const text = await ok(gw(tokens[who]!, method, path, body));
          expect(text).toContain('visible');
          if (who === 'unscoped') expect(text, `${who} after ${order[0]}`).toContain(CLASSIFIED);
          else expect(text, `${who} after ${order[0]}`).not.toContain(CLASSIFIED);
        }
      }
    }
  });

  it('refuses query-links, filters and sorts on them, naming the table outside the scope', async () => {
    await refused(gw(tokens.by_name!, 'POST', 'query-links/', { table_name: 'Table1', link_column_key: ids.secretLink, rows: [{ row_id: ids.row }] }));
    await refused(gw(tokens.by_name!, 'POST', 'filtered-rows/?table_name=Table1', { filters: [{ column_name: 'Secret names', filter_predicate: 'is_not_empty' }] }));
    await refused(gw(tokens.by_name!, 'GET', `rows/?table_name=Table1&order_by=${encodeURIComponent('Secret link')}`));
    const inside = await ok(gw(tokens.by_name!, 'POST', 'query-links/', { table_name: 'Table1', link_column_key: ids.selfLink, rows: [{ row_id: ids.row }] }));
    expect(inside).toContain(ids.otherRow);
    // SQL sees them as absent columns.
    const named = await gw(tokens.by_name!, 'POST', 'sql/', { sql: 'SELECT `Secret names` FROM Table1' });
    expect(named.statusCode, named.body).toBe(400);
    expect(named.body).not.toContain(CLASSIFIED);
  });

  it('leaves them out of the change feed: no link change naming the other table, no cell of them; subscribing to them is 403', async () => {
    const feed = JSON.parse(await ok(gw(tokens.by_name!, 'GET', 'changes/?limit=1000'))) as { changes: Array<{ table_id: string; op_type: string; row_data: Array<{ column_key: string }> }> };
    const text = JSON.stringify(feed);
    expect(text).not.toContain(CLASSIFIED);
    expect(text).not.toContain(ids.secretRow);
    expect(feed.changes.some((c) => c.row_data.some((d) => d.column_key === ids.secretLink || d.column_key === ids.lookup))).toBe(false);
    // The link inside the scope is there, and the rows' own inserts.
    expect(feed.changes.some((c) => c.op_type === 'add_link' && c.row_data.some((d) => d.column_key === ids.selfLink))).toBe(true);
    expect(text).toContain('visible');
    // The control: an unscoped token's feed has the link to Secret.
    expect(await ok(gw(tokens.unscoped!, 'GET', 'changes/?limit=1000'))).toContain(ids.secretRow);
    await refused(gw(tokens.by_name!, 'GET', `changes/?tables=Table1&columns=${encodeURIComponent('Secret link')}`));
    await refused(gw(tokens.by_name!, 'GET', `changes/?tables=Table1&filters=${encodeURIComponent(JSON.stringify([{ column_name: 'Secret names', filter_predicate: 'is_not_empty' }]))}`));
  });
});
