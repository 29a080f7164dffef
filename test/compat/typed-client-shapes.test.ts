import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createUser, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, type Gateway, listRows, storedRowCount, through } from '../http/rows.fixtures.js';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.each(DIALECTS)('shapes the typed clients check (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  it('a new base is the blank base: Table1, Name, Default View and empty rows to read a first row from', async () => {
    const owner = await createUser(t);
    const base = await createBase(t, owner, 'Blank', { blankRows: true });
    const blank = through(t, { owner, base, token: await baseToken(t, owner, base) });
    const rows = await listRows(blank, 'table_name=Table1');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ _id: expect.any(String), _creator: owner.virtualId });
    const meta = (await blank.call('GET', 'metadata/')).json().metadata;
    expect(meta.tables.map((x: { name: string }) => x.name)).toEqual(['Table1']);
    expect(meta.tables[0].columns.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([['Name', 'text']]);
    expect(meta.tables[0].views.map((v: { name: string }) => v.name)).toEqual(['Default View']);
  });

  it('metadata has settings.date_settings.first_day_of_week, and a view\'s summaries is a list', async () => {
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    expect(meta.settings).toEqual({ date_settings: { first_day_of_week: 'Monday' } });
    expect(meta.tables[0].views[0].summaries).toEqual([]);
    const views = (await g.call('GET', 'views/?table_name=Table1')).json().views;
    expect(views[0].summaries).toEqual([]);
    const whole = (await g.call('GET', '')).json();
    expect(whole.settings.date_settings.first_day_of_week).toBe('Monday');
  });

  it('auto-number joins its prefix with a dash', async () => {
    await addTable(g, 'Numbered', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'No', column_type: 'auto-number', column_data: { digits: 4, prefix: 'row' } },
      { column_name: 'Plain', column_type: 'auto-number', column_data: { digits: 3 } },
    ]);
    await appendRows(g, 'Numbered', [{ Title: 'a' }, { Title: 'b' }]);
    const rows = await listRows(g, 'table_name=Numbered&convert_keys=true');
    expect(rows.map((r) => r.No)).toEqual(['row-0001', 'row-0002']);
    expect(rows.map((r) => r.Plain)).toEqual(['001', '002']);
  });

  it('POST columns/ without column_type makes a text column; colours take #RGB and #RRGGBB, nothing else', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Untyped' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Untyped', type: 'text' });

    const colours = await g.call('POST', 'columns/', {
      table_name: 'Table1',
      column_name: 'Colour',
      column_type: 'single-select',
      column_data: { options: [{ name: 'short', color: '#f00', textColor: '#FFF' }, { name: 'long', color: '#FF0000', textColor: '#202020' }] },
    });
    expect(colours.statusCode, colours.body).toBe(200);
    expect(colours.json().data.options.map((o: { color: string }) => o.color)).toEqual(['#f00', '#FF0000']);
    for (const bad of ['#ff00', 'red', '#GGG', '#12345']) {
      const refused = await g.call('POST', 'columns/', {
        table_name: 'Table1',
        column_name: `Bad ${bad}`,
        column_type: 'single-select',
        column_data: { options: [{ name: 'x', color: bad }] },
      });
      expect(refused.statusCode, bad).toBe(400);
      expect(refused.json()).toEqual({ error_msg: 'column_data.options.0.color invalid.' });
    }
    const unknownType = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Odd', column_type: 'no-such-type' });
    expect(unknownType.statusCode).toBe(400);
  });

  it('digital-sign columns store {username, sign_image_url, sign_time} and refuse anything else', async () => {
    await addTable(g, 'Signed', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Sign', column_type: 'digital-sign' },
    ]);
    const sign = { username: g.owner.virtualId, sign_image_url: '/asset/sign.png', sign_time: '2030-06-20T10:00:00+00:00' };
    await appendRows(g, 'Signed', [{ Title: 'ok', Sign: sign }]);
    expect((await listRows(g, 'table_name=Signed&convert_keys=true'))[0]!.Sign).toEqual(sign);
    const before = await storedRowCount(g);
    for (const bad of ['text', ['list'], { username: 1, sign_image_url: 'x' }, { username: 'u' }]) {
      const res = await g.call('POST', 'rows/', { table_name: 'Signed', rows: [{ Title: 'bad', Sign: bad }] });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(await storedRowCount(g)).toBe(before);
  });

  it('filter modifiers accept the_past_number_of_days / the_next_number_of_days beside the documented spellings', async () => {
    await addTable(g, 'Dated', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'When', column_type: 'date' },
    ]);
    const now = t.clock.now();
    await appendRows(g, 'Dated', [
      { Title: 'recent', When: day(now - 2 * 86_400_000) },
      { Title: 'old', When: day(now - 40 * 86_400_000) },
      { Title: 'soon', When: day(now + 2 * 86_400_000) },
    ]);
    const titles = async (modifier: string) => {
      const res = await g.call('POST', 'filtered-rows/?table_name=Dated', {
        filters: [{ column_name: 'When', filter_predicate: 'is_within', filter_term_modifier: modifier, filter_term: '5' }],
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().rows.map((r: { Title: string }) => r.Title);
    };
    expect(await titles('the_past_number_of_days')).toEqual(['recent']);
    expect(await titles('the_past_number_of_days')).toEqual(await titles('the_past_numbers_of_days'));
    expect(await titles('the_next_number_of_days')).toEqual(['soon']);
    expect(await titles('the_next_number_of_days')).toEqual(await titles('the_next_numbers_of_days'));
    const bad = await g.call('POST', 'filtered-rows/?table_name=Dated', {
      filters: [{ column_name: 'When', filter_predicate: 'is_within', filter_term_modifier: 'the_past_numbers_of_day', filter_term: '5' }],
    });
    expect(bad.statusCode).toBe(400);
  });

  it('date cells accept the display formats and ISO date-times with an offset', async () => {
    await addTable(g, 'Formats', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Day', column_type: 'date', column_data: { format: 'DD/MM/YYYY' } },
      { column_name: 'At', column_type: 'date', column_data: { format: 'M/D/YYYY HH:mm' } },
    ]);
    await appendRows(g, 'Formats', [
      { Title: 'slash', Day: '20/06/2030', At: '6/20/2030 23:55' },
      { Title: 'dots', Day: '20.06.2030', At: '2030/06/20 23:55' },
      { Title: 'offset', Day: '2030-06-20T00:00:00+02:00', At: '2030-06-21T01:55:00+02:00' },
    ]);
    const rows = await listRows(g, 'table_name=Formats&convert_keys=true');
    expect(rows.map((r) => [r.Title, r.Day, r.At])).toEqual([
      ['slash', '2030-06-20T00:00:00+00:00', '2030-06-20T23:55:00+00:00'],
      ['dots', '2030-06-20T00:00:00+00:00', '2030-06-20T23:55:00+00:00'],
      ['offset', '2030-06-20T00:00:00+00:00', '2030-06-20T23:55:00+00:00'],
    ]);
    const bad = await g.call('POST', 'rows/', { table_name: 'Formats', rows: [{ Title: 'bad', Day: '6/31/2030' }] });
    expect(bad.statusCode).toBe(400);
  });

  it('POST rows/ with an empty rows list answers 400 naming the problem, and writes nothing', async () => {
    const before = await storedRowCount(g);
    const res = await g.call('POST', 'rows/', { table_name: 'Table1', rows: [] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'rows invalid: the list is empty.' });
    expect(await storedRowCount(g)).toBe(before);
  });
});
