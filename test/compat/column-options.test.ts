import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { READ_ONLY_ROLES, WRITE_ROLES, roleSet, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, listRows, storedRowCount, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('column-options, column-cascade-settings, batch-append-rows (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  const options = async (column = 'Status') => {
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    const table = meta.tables.find((x: { name: string }) => x.name === 'Tasks');
    return table.columns.find((c: { name: string }) => c.name === column).data?.options ?? [];
  };
  const metadataVersion = async () => (await g.call('GET', 'metadata/')).json().metadata.version;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    roles = await roleSet(t, owner, base);
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Status', column_type: 'single-select', column_data: { options: [{ name: 'open', color: '#FFFCB5', textColor: '#202020' }] } },
      { column_name: 'Tags', column_type: 'multiple-select' },
      { column_name: 'Continent', column_type: 'single-select', column_data: { options: [{ name: 'Europe' }, { name: 'Asia' }] } },
      { column_name: 'Country', column_type: 'single-select', column_data: { options: [{ name: 'France' }, { name: 'Japan' }] } },
    ]);
  });
  afterAll(() => t.close());

  it('POST adds options with new ids and skips names that exist', async () => {
    const res = await g.call('POST', 'column-options/', {
      table_name: 'Tasks',
      column: 'Status',
      options: [{ name: 'open', color: '#000000' }, { name: 'done', color: '#4ECCCB', textColor: '#FFF' }, { name: 'blocked' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const list = await options();
    expect(list.map((o: { name: string }) => o.name)).toEqual(['open', 'done', 'blocked']);
    expect(list[0].color).toBe('#FFFCB5'); // the existing option is left as it was
    expect(list[1]).toMatchObject({ color: '#4ECCCB', textColor: '#FFF', id: expect.stringMatching(/^\d{6}$/) });
    expect(new Set(list.map((o: { id: string }) => o.id)).size).toBe(3);
  });

  it('PUT updates options by name (or id) and renames the cells that hold them; DELETE removes them from cells', async () => {
    await appendRows(g, 'Tasks', [{ Title: 'a', Status: 'done', Tags: ['x', 'y'] }, { Title: 'b', Status: 'open', Tags: ['y'] }]);
    const put = await g.call('PUT', 'column-options/', { table_name: 'Tasks', column: 'Status', options: [{ name: 'done', color: '#00FF00' }], return_options: true });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().options).toEqual([expect.objectContaining({ name: 'done', color: '#00FF00' })]);

    const doneId = (await options()).find((o: { name: string }) => o.name === 'done').id;
    const rename = await g.call('PUT', 'column-options/', { table_name: 'Tasks', column: 'Status', options: [{ id: doneId, name: 'finished' }] });
    expect(rename.json()).toEqual({ success: true });
    let rows = await listRows(g, 'table_name=Tasks&convert_keys=true');
    expect(rows.map((r) => r.Status)).toEqual(['finished', 'open']);

    const del = await g.call('DELETE', 'column-options/', { table_name: 'Tasks', column: 'Tags', option_names: ['y'] });
    expect(del.statusCode, del.body).toBe(200);
    expect((await options('Tags')).map((o: { name: string }) => o.name)).toEqual(['x']);
    rows = await listRows(g, 'table_name=Tasks&convert_keys=true');
    expect(rows.map((r) => r.Tags ?? null)).toEqual([['x'], null]);
  });

  it('refuses bad inputs with a 4xx naming the problem, and changes nothing', async () => {
    const before = await metadataVersion();
    const cases: [unknown, number, string][] = [
      [{ table_name: 'Tasks', column: 'Title', options: [{ name: 'z' }] }, 400, 'column Title is not a single or multiple select column.'],
      [{ table_name: 'Tasks', column: 'Nope', options: [{ name: 'z' }] }, 404, 'column Nope not found'],
      [{ table_name: 'Nope', column: 'Status', options: [{ name: 'z' }] }, 404, 'table Nope not found'],
      [{ table_name: 'Tasks', column: 'Status', options: 'z' }, 400, 'options invalid.'],
      [{ table_name: 'Tasks', column: 'Status', options: [] }, 400, 'options invalid.'],
      [{ table_name: 'Tasks', column: 'Status', options: [{ name: 'fine' }, { name: '' }] }, 400, 'options.1.name invalid.'],
      [{ table_name: 'Tasks', column: 'Status', options: [{ name: 'fine' }, { name: 'red', color: 'red' }] }, 400, 'options.1.color invalid.'],
      [{ table_name: 'Tasks', column: 'Status', options: Array.from({ length: 1001 }, (_, i) => ({ name: `o${i}` })) }, 400, 'Number of options exceeds 1000.'],
    ];
    for (const [body, status, message] of cases) {
      const res = await g.call('POST', 'column-options/', body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json()).toEqual({ error_msg: message });
    }
    const put = await g.call('PUT', 'column-options/', { table_name: 'Tasks', column: 'Status', options: [{ name: 'open', color: '#00FF00' }, { name: 'ghost' }] });
    expect(put.statusCode).toBe(400);
    expect(put.json()).toEqual({ error_msg: 'options.1: option ghost not found.' });
    const clash = await g.call('PUT', 'column-options/', { table_name: 'Tasks', column: 'Status', options: [{ name: 'open', new_name: 'x' }, { id: (await options())[1].id, name: 'open' }] });
    expect(clash.statusCode).toBe(400);
    const del = await g.call('DELETE', 'column-options/', { table_name: 'Tasks', column: 'Status', option_names: 'open' });
    expect(del.json()).toEqual({ error_msg: 'option_names invalid.' });
    expect(await metadataVersion()).toBe(before);
    expect((await options()).find((o: { name: string }) => o.name === 'open').color).toBe('#FFFCB5');
  });

  it('stores cascade settings on the child column, and refuses unknown parent options', async () => {
    const res = await g.call('POST', 'column-cascade-settings/', {
      table_name: 'Tasks',
      child_column: 'Country',
      parent_column: 'Continent',
      cascade_settings: { Europe: ['France'], Asia: ['Japan'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    const columns = meta.tables.find((x: { name: string }) => x.name === 'Tasks').columns;
    const continent = columns.find((c: { name: string }) => c.name === 'Continent');
    const country = columns.find((c: { name: string }) => c.name === 'Country');
    const id = (col: { data: { options: { id: string; name: string }[] } }, name: string) => col.data.options.find((o) => o.name === name)!.id;
    expect(country.data.cascade_column_key).toBe(continent.key);
    expect(country.data.cascade_settings).toEqual({ [id(continent, 'Europe')]: [id(country, 'France')], [id(continent, 'Asia')]: [id(country, 'Japan')] });

    const bad: [unknown, string][] = [
      [{ table_name: 'Tasks', child_column: 'Country', parent_column: 'Continent', cascade_settings: { Africa: ['France'] } }, 'cascade_settings: option Africa of Continent not found.'],
      [{ table_name: 'Tasks', child_column: 'Country', parent_column: 'Continent', cascade_settings: { Europe: [' '] } }, 'cascade_settings.Europe.0.name invalid.'],
      [{ table_name: 'Tasks', child_column: 'Country', parent_column: 'Continent', cascade_settings: [] }, 'cascade_settings invalid.'],
      [{ table_name: 'Tasks', child_column: 'Country', parent_column: 'Country', cascade_settings: {} }, 'child_column and parent_column must differ.'],
      [{ table_name: 'Tasks', child_column: 'Country', parent_column: 'Title', cascade_settings: {} }, 'column Title is not a single or multiple select column.'],
    ];
    for (const [body, message] of bad) {
      const r = await g.call('POST', 'column-cascade-settings/', body);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error_msg: message });
    }
  });

  it('creates child options named in cascade settings that do not exist yet (the original accepts them)', async () => {
    const res = await g.call('POST', 'column-cascade-settings/', {
      table_name: 'Tasks',
      child_column: 'Country',
      parent_column: 'Continent',
      cascade_settings: { Europe: ['France', 'Spain', 'Italy'], Asia: ['Japan', 'Spain'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const columns = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks').columns;
    const continent = columns.find((c: { name: string }) => c.name === 'Continent');
    const country = columns.find((c: { name: string }) => c.name === 'Country');
    const id = (col: { data: { options: { id: string; name: string }[] } }, name: string) => col.data.options.find((o) => o.name === name)!.id;
    const names = country.data.options.map((o: { name: string }) => o.name);
    expect(names.filter((n: string) => n === 'Spain')).toHaveLength(1);
    expect(names).toEqual(expect.arrayContaining(['France', 'Japan', 'Spain', 'Italy']));
    expect(country.data.cascade_settings).toEqual({
      [id(continent, 'Europe')]: [id(country, 'France'), id(country, 'Spain'), id(country, 'Italy')],
      [id(continent, 'Asia')]: [id(country, 'Japan'), id(country, 'Spain')],
    });
    // The new options are real options: a row may take one.
    const added = await g.call('POST', 'rows/', { table_name: 'Tasks', rows: [{ Country: 'Italy' }] });
    expect(added.statusCode, added.body).toBe(200);
  });

  it('batch-append-rows is POST rows/: same answer, same validation', async () => {
    const before = await storedRowCount(g);
    const res = await g.call('POST', 'batch-append-rows/', { table_name: 'Tasks', rows: [{ Title: 'c' }, { Title: 'd' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ inserted_row_count: 2, row_ids: [{ _id: expect.any(String) }, { _id: expect.any(String) }] });
    expect(await storedRowCount(g)).toBe(before + 2);
    const empty = await g.call('POST', 'batch-append-rows/', { table_name: 'Tasks', rows: [] });
    expect(empty.statusCode).toBe(400);
    expect(await storedRowCount(g)).toBe(before + 2);
  });

  it.each(WRITE_ROLES)('%s may change options and append rows', async (role) => {
    const token = roles.tokens[role];
    const add = await g.call('POST', 'column-options/', { table_name: 'Tasks', column: 'Tags', options: [{ name: `by-${role}` }] }, token);
    expect(add.statusCode, add.body).toBe(200);
    expect((await options('Tags')).map((o: { name: string }) => o.name)).toContain(`by-${role}`);
    expect((await g.call('POST', 'batch-append-rows/', { table_name: 'Tasks', rows: [{ Title: role }] }, token)).statusCode).toBe(200);
  });

  it.each(READ_ONLY_ROLES)('%s (read-only) is refused with 403 and changes nothing', async (role) => {
    const token = roles.tokens[role];
    const before = await metadataVersion();
    const rowsBefore = await storedRowCount(g);
    for (const [method, path, body] of [
      ['POST', 'column-options/', { table_name: 'Tasks', column: 'Tags', options: [{ name: 'nope' }] }],
      ['PUT', 'column-options/', { table_name: 'Tasks', column: 'Tags', options: [{ name: 'x', color: '#000' }] }],
      ['DELETE', 'column-options/', { table_name: 'Tasks', column: 'Tags', option_names: ['x'] }],
      ['POST', 'column-cascade-settings/', { table_name: 'Tasks', child_column: 'Country', parent_column: 'Continent', cascade_settings: {} }],
      ['POST', 'batch-append-rows/', { table_name: 'Tasks', rows: [{ Title: 'no' }] }],
    ] as const) {
      const res = await g.call(method, path, body, token);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
    }
    expect(await metadataVersion()).toBe(before);
    expect(await storedRowCount(g)).toBe(rowsBefore);
  });

  it('without a Base-Token, or with a bad one, nothing is served', async () => {
    const none = await t.request({ method: 'POST', url: g.url('column-options/'), payload: { table_name: 'Tasks', column: 'Tags', options: [{ name: 'n' }] } });
    expect([401, 403]).toContain(none.statusCode);
    const bad = await g.call('POST', 'column-options/', { table_name: 'Tasks', column: 'Tags', options: [{ name: 'n' }] }, 'not-a-token');
    expect([401, 403]).toContain(bad.statusCode);
    expect((await options('Tags')).map((o: { name: string }) => o.name)).not.toContain('n');
  });
});
