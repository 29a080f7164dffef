import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, gateway, type Gateway } from '../http/rows.fixtures.js';

type Column = { key: string; name: string; type: string; data: Record<string, unknown> | null };

describe.each(DIALECTS)('column data and view settings are validated (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'T', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
    ]);
    await addTable(g, 'Other', [{ column_name: 'Title', column_type: 'text' }]);
  });
  afterAll(() => t.close());

  const metadata = async () => (await g.call('GET', 'metadata/')).json().metadata as { tables: Array<{ name: string; columns: Column[]; views: Array<Record<string, unknown>> }> };
  const columnsOf = async (table: string) => (await metadata()).tables.find((x) => x.name === table)!.columns;
  const column = async (table: string, name: string) => (await columnsOf(table)).find((c) => c.name === name);

  it('drops unknown keys of a new column and keeps the known ones', async () => {
    const res = await g.call('POST', 'columns/', {
      table_name: 'T',
      column_name: 'Cost',
      column_type: 'number',
      column_data: { format: 'euro', decimal: 'comma', precision: 2, enable_precision: true, junk: 'x'.repeat(1000), __proto__x: 1 },
    });
    expect(res.statusCode).toBe(200);
    const stored = (await column('T', 'Cost'))!.data!;
    expect(stored).toMatchObject({ format: 'euro', decimal: 'comma', precision: 2, enable_precision: true });
    expect(Object.keys(stored)).not.toContain('junk');
    expect(Object.keys(stored)).not.toContain('__proto__x');
    // A type without settings stores none.
    expect((await g.call('POST', 'columns/', { table_name: 'T', column_name: 'Pic', column_type: 'image', column_data: { anything: [1, 2] } })).statusCode).toBe(200);
    expect((await column('T', 'Pic'))!.data).toBeNull();
  });

  it('drops unknown keys of select options, also in JSON-string column_data', async () => {
    const res = await g.call('POST', 'columns/', {
      table_name: 'T',
      column_name: 'Stage',
      column_type: 'single-select',
      column_data: JSON.stringify({ options: [{ name: 'open', color: '#FFFCB5', textColor: '#202020', secret: 'y', borderColor: '#7BC0D6' }], extra: true }),
    });
    expect(res.statusCode).toBe(200);
    const data = (await column('T', 'Stage'))!.data!;
    expect(Object.keys(data)).toEqual(['options']);
    const options = data.options as Array<Record<string, unknown>>;
    expect(Object.keys(options[0]!).sort()).toEqual(['borderColor', 'color', 'id', 'name', 'textColor']);
  });

  it('answers 400 naming a known key of the wrong type, and changes nothing', async () => {
    const before = await columnsOf('T');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ column_name: 'A', column_type: 'number', column_data: { precision: '2' } }, 'column_data.precision invalid: expected an integer.'],
      [{ column_name: 'A', column_type: 'number', column_data: { enable_precision: 'yes' } }, 'column_data.enable_precision invalid: expected true or false.'],
      [{ column_name: 'A', column_type: 'date', column_data: { format: 5 } }, 'column_data.format invalid: expected a string.'],
      [{ column_name: 'A', column_type: 'rate', column_data: { rate_max_number: '5' } }, 'column_data.rate_max_number invalid: expected an integer.'],
      [{ column_name: 'A', column_type: 'single-select', column_data: { options: [{ name: 'a', id: 7 }] } }, 'column_data.options.0.id invalid: expected a string.'],
      [{ column_name: 'A', column_type: 'collaborator', column_data: { enable_send_notification: 1 } }, 'column_data.enable_send_notification invalid: expected true or false.'],
      [{ column_name: 'A', column_type: 'formula', column_data: { formula: ['{Price}'] } }, 'column_data.formula invalid: expected a string.'],
      [{ column_name: 'A', column_type: 'auto-number', column_data: { prefix: 12 } }, 'column_data.prefix invalid: expected a string.'],
      [{ column_name: 'A', column_type: 'link', column_data: { other_table: { name: 'Other' } } }, 'column_data.other_table invalid: expected a string.'],
      [{ column_name: 'A', column_type: 'text', column_data: { enable_fill_default_value: 'true' } }, 'column_data.enable_fill_default_value invalid: expected true or false.'],
    ];
    for (const [body, message] of cases) {
      const res = await g.call('POST', 'columns/', { table_name: 'T', ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
    const batch = await g.call('POST', 'batch-append-columns/', { table_name: 'T', columns: [{ column_name: 'B', column_type: 'duration', column_data: { duration_format: 3 } }] });
    expect(batch.json()).toEqual({ error_msg: 'column_data.duration_format invalid: expected a string.' });
    const table = await g.call('POST', 'tables/', { table_name: 'New', columns: [{ column_name: 'N', column_type: 'number', column_data: { thousands: false } }] });
    expect(table.json()).toEqual({ error_msg: 'column_data.thousands invalid: expected a string.' });
    expect(await columnsOf('T')).toEqual(before);
    expect((await metadata()).tables.map((x) => x.name)).not.toContain('New');
  });

  it('applies to batch-appended columns, new tables and retyped columns', async () => {
    const batch = await g.call('POST', 'batch-append-columns/', {
      table_name: 'T',
      columns: [{ column_name: 'Stars', column_type: 'rate', column_data: { rate_max_number: 7, wrong: 1 } }],
    });
    expect(batch.statusCode).toBe(200);
    expect((await column('T', 'Stars'))!.data).toEqual({ rate_max_number: 7, rate_style_color: '#FF8000', rate_style_type: 'dtable-icon-rate' });

    const table = await g.call('POST', 'tables/', {
      table_name: 'Made',
      columns: [{ column_name: 'When', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm', junk: 1 } }],
    });
    expect(table.statusCode).toBe(200);
    expect((await column('Made', 'When'))!.data).toEqual({ format: 'YYYY-MM-DD HH:mm' });

    const retype = await g.call('PUT', 'columns/', {
      table_name: 'T',
      column: 'Name',
      op_type: 'modify_column_type',
      new_column_type: 'text',
      column_data: { default_value: 'n/a', enable_fill_default_value: true, junk: { deep: true } },
    });
    expect(retype.statusCode).toBe(200);
    expect((await column('T', 'Name'))!.data).toEqual({ default_value: 'n/a', enable_fill_default_value: true });
    const wrong = await g.call('PUT', 'columns/', { table_name: 'T', column: 'Price', op_type: 'modify_column_type', new_column_type: 'number', column_data: { decimal: ['dot'] } });
    expect(wrong.json()).toEqual({ error_msg: 'column_data.decimal invalid: expected a string.' });
  });

  it('keeps the keys the server computes for formula and link columns', async () => {
    const formula = await g.call('POST', 'columns/', {
      table_name: 'T',
      column_name: 'Double',
      column_type: 'formula',
      column_data: { formula: '{Price} * 2', precision: 1, result_type: 'bogus', operated_columns: ['zzzz'], junk: 1 },
    });
    expect(formula.statusCode).toBe(200);
    const data = (await column('T', 'Double'))!.data!;
    expect(data).toMatchObject({ formula: '{Price} * 2', precision: 1, result_type: 'number' });
    expect(data.operated_columns).toEqual([(await column('T', 'Price'))!.key]);
    expect(Object.keys(data)).not.toContain('junk');

    const link = await g.call('POST', 'columns/', { table_name: 'T', column_name: 'Rel', column_type: 'link', column_data: { table: 'T', other_table: 'Other', junk: 1 } });
    expect(link.statusCode).toBe(200);
    const linkData = (await column('T', 'Rel'))!.data!;
    expect(Object.keys(linkData).sort()).toEqual(['display_column_key', 'is_internal_link', 'is_multiple', 'is_row_from_view', 'link_id', 'other_table_id', 'other_view_id', 'table_id']);

    const lookup = await g.call('POST', 'columns/', {
      table_name: 'T',
      column_name: 'Titles',
      column_type: 'link-formula',
      column_data: { formula: 'lookup', link_column_key: 'Rel', level1_linked_column_key: 'Title', junk: 'x' },
    });
    expect(lookup.statusCode).toBe(200);
    const lookupData = (await column('T', 'Titles'))!.data!;
    expect(lookupData).toMatchObject({ formula: 'lookup', link_column_key: (await column('T', 'Rel'))!.key, result_type: 'array' });
    expect(Object.keys(lookupData)).not.toContain('junk');
  });

  it('drops unknown keys of view filters (nested groups too) and refuses wrong types with 400', async () => {
    const created = await g.call('POST', 'views/?table_name=T', {
      name: 'Cheap',
      filters: [
        { column_name: 'Price', filter_predicate: 'less', filter_term: 10, note: 'x'.repeat(500) },
        { filter_conjunction: 'Or', filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'a', extra: [1] }], junk: true },
      ],
      unknown_setting: 1,
    });
    expect(created.statusCode).toBe(200);
    const view = (await g.call('GET', 'views/Cheap/?table_name=T')).json() as Record<string, unknown>;
    expect(Object.keys(view)).not.toContain('unknown_setting');
    const filters = view.filters as Array<Record<string, unknown>>;
    expect(Object.keys(filters[0]!).sort()).toEqual(['column_key', 'filter_predicate', 'filter_term']);
    expect(Object.keys(filters[1]!).sort()).toEqual(['filter_conjunction', 'filters']);
    expect(Object.keys((filters[1]!.filters as Array<Record<string, unknown>>)[0]!).sort()).toEqual(['column_key', 'filter_predicate', 'filter_term']);

    const cases: Array<[unknown[], string]> = [
      [[{ column_name: 'Price', filter_predicate: 7, filter_term: 1 }], 'filters.0.filter_predicate invalid: expected a string.'],
      [[{ column_name: 'Name', filter_predicate: 'is', filter_term: { a: 1 } }], 'filters.0.filter_term invalid: expected a string, number, true/false or a list of strings and numbers.'],
      [[{ filters: [{ column_name: 'Name', filter_predicate: 'is', filter_term_modifier: 3 }], filter_conjunction: 'And' }], 'filters.0.filters.0.filter_term_modifier invalid: expected a string.'],
    ];
    for (const [bad, message] of cases) {
      const res = await g.call('PUT', 'views/Cheap/?table_name=T', { filters: bad });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
    expect(((await g.call('GET', 'views/Cheap/?table_name=T')).json().filters as unknown[]).length).toBe(2);
  });
});
