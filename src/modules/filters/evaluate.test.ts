import { describe, expect, it } from 'vitest';
import { matchesRow, parseFilters, type FilterColumn, type FilterContext, type StoredRow } from './index.js';

const ME = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@auth.local';
const YOU = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb@auth.local';

const COLUMNS: FilterColumn[] = [
  { key: 'tx00', name: 'Text', type: 'text', data: null },
  { key: 'lt00', name: 'Long', type: 'long-text', data: null },
  { key: 'em00', name: 'Email', type: 'email', data: null },
  { key: 'nb00', name: 'Number', type: 'number', data: null },
  { key: 'du00', name: 'Duration', type: 'duration', data: { duration_format: 'h:mm:ss' } },
  { key: 'rt00', name: 'Rate', type: 'rate', data: null },
  { key: 'cb00', name: 'Check', type: 'checkbox', data: null },
  { key: 'dt00', name: 'Date', type: 'date', data: null },
  { key: 'ct00', name: 'Created', type: 'ctime', data: null },
  { key: 'mt00', name: 'Modified', type: 'mtime', data: null },
  { key: 'ss00', name: 'Single', type: 'single-select', data: { options: [{ id: 'id01', name: 'One' }, { id: 'id02', name: 'Two' }] } },
  { key: 'ms00', name: 'Multi', type: 'multiple-select', data: { options: [{ id: 'id01', name: 'One' }, { id: 'id02', name: 'Two' }] } },
  { key: 'co00', name: 'Collab', type: 'collaborator', data: null },
  { key: 'cr00', name: 'Creator', type: 'creator', data: null },
  { key: 'lm00', name: 'Modifier', type: 'last-modifier', data: null },
  { key: 'fi00', name: 'File', type: 'file', data: null },
  { key: 'im00', name: 'Image', type: 'image', data: null },
  { key: 'constructor', name: 'Proto', type: 'text', data: null },
];

// Wednesday 2024-03-06 10:00 in UTC.
const CTX: FilterContext = { now: Date.UTC(2024, 2, 6, 10), timeZone: 'UTC', currentUser: ME };

function row(data: Record<string, unknown>, meta: Partial<StoredRow> = {}): StoredRow {
  return { _id: 'r', _ctime: Date.UTC(2024, 2, 1), _mtime: Date.UTC(2024, 2, 1), _creator: ME, _last_modifier: YOU, data, ...meta };
}

function matches(filters: unknown[], target: StoredRow, ctx: FilterContext = CTX, conjunction?: string): boolean {
  const parsed = parseFilters({ filters, filter_conjunction: conjunction }, COLUMNS);
  if (!parsed.ok) throw new Error(parsed.error);
  return matchesRow(parsed.filter, target, ctx);
}

const f = (column_name: string, filter_predicate: string, filter_term?: unknown, filter_term_modifier?: string) => ({
  column_name,
  filter_predicate,
  filter_term,
  filter_term_modifier,
});

/** [cell value, expected] pairs for one filter item on one column. */
function table(column: string, predicate: string, term: unknown, pairs: [unknown, boolean][], modifier?: string, ctx?: FilterContext) {
  const key = COLUMNS.find((c) => c.name === column)!.key;
  for (const [value, expected] of pairs) {
    const data = value === undefined ? {} : { [key]: value };
    expect(matches([f(column, predicate, term, modifier)], row(data), ctx), `${column} ${predicate} ${JSON.stringify(term)} on ${JSON.stringify(value)}`).toBe(expected);
  }
}

describe('matchesRow: text family', () => {
  it('contains folds ASCII case only and needs a string cell', () => {
    table('Text', 'contains', 'LpH', [['Alpha', true], ['ALPHA', true], ['alp', false], ['ÄLPHA', true], [undefined, false], [null, false], ['', false], [12, false], [['Alpha'], false]]);
    table('Text', 'contains', 'ä', [['Ä', false], ['ä', true], ['bär', true]]);
    table('Text', 'contains', '12', [[12, false], ['a12', true]]);
    table('Email', 'contains', 'EXAMPLE', [['bob@example.com', true], ['bob@exampl.com', false]]);
  });

  it('does_not_contain is the negation, so empty and non-string cells match', () => {
    table('Text', 'does_not_contain', 'a', [['Alpha', false], ['xyz', true], [undefined, true], [null, true], ['', true], [5, true]]);
  });

  it('is / is_not are exact and case-sensitive', () => {
    table('Text', 'is', 'Alpha', [['Alpha', true], ['alpha', false], ['Alpha ', false], [undefined, false]]);
    table('Text', 'is_not', 'Alpha', [['Alpha', false], ['alpha', true], [undefined, true], [null, true]]);
  });

  it('is_empty counts missing, null, "" and [] as empty', () => {
    table('Text', 'is_empty', undefined, [[undefined, true], [null, true], ['', true], [[], true], [' ', false], [0, false], [false, false], [{}, false]]);
    table('Text', 'is_not_empty', undefined, [[undefined, false], ['', false], ['x', true]]);
  });

  it('is_current_user_ID compares with the current user, and matches nothing without one', () => {
    table('Text', 'is_current_user_ID', undefined, [[ME, true], [YOU, false], [undefined, false]]);
    const noUser = { ...CTX, currentUser: undefined };
    table('Text', 'is_current_user_ID', undefined, [[ME, false], [undefined, false], ['', false]], undefined, noUser);
  });

  it('ignores an item whose term is blank', () => {
    table('Text', 'contains', '', [['x', true], [undefined, true]]);
    table('Text', 'is', null, [['x', true]]);
  });

  it('reads only own keys of the row data', () => {
    table('Proto', 'is_empty', undefined, [[undefined, true]]);
    expect(matches([f('Proto', 'is_not_empty')], row({}))).toBe(false);
    expect(matches([f('Text', 'is_empty')], { ...row({}), data: null as unknown as Record<string, unknown> })).toBe(true);
  });
});

describe('matchesRow: number family', () => {
  it('compares JSON numbers only', () => {
    table('Number', 'equal', 10, [[10, true], [10.0, true], [10.5, false], ['10', false], [undefined, false], [null, false]]);
    table('Number', 'equal', '0', [[0, true], [-0, true], [undefined, false], ['', false]]);
    table('Number', 'not_equal', 10, [[10, false], [9, true], [undefined, true], ['10', true]]);
    table('Number', 'greater', 1.5, [[1.5, false], [1.6, true], [-2, false], [true, false]]);
    table('Number', 'greater_or_equal', -1, [[-1, true], [-1.01, false], [0, true]]);
    table('Number', 'less', '1e3', [[999, true], [1000, false], [undefined, false]]);
    table('Number', 'less_or_equal', 0, [[0, true], [0.0001, false], [-5, true]]);
    table('Number', 'is_empty', undefined, [[0, false], [undefined, true], [null, true], ['', true]]);
    table('Number', 'is_not_empty', undefined, [[0, true], [null, false]]);
  });

  it('reads duration terms as seconds and compares rates', () => {
    table('Duration', 'equal', '1:02:03', [[3723, true], [3724, false]]);
    table('Duration', 'less', '0:01', [[59, true], [60, false]]);
    // A full-width colon (U+FF1A, as East Asian keyboards type it) separates like ':'.
    table('Duration', 'equal', '1\uFF1A02\uFF1A03', [[3723, true], [3724, false]]);
    table('Rate', 'greater_or_equal', 3, [[3, true], [2, false]]);
  });

  it('ignores a blank term', () => {
    table('Number', 'greater', '', [[-100, true], [undefined, true]]);
  });
});

describe('matchesRow: checkbox', () => {
  it('is true matches boolean true only; is false everything else', () => {
    table('Check', 'is', true, [[true, true], [false, false], ['true', false], [1, false], [undefined, false]]);
    table('Check', 'is', 'true', [[true, true], [false, false]]);
    table('Check', 'is', false, [[true, false], [false, true], [undefined, true], [null, true], ['true', true]]);
    table('Check', 'is', undefined, [[true, false], [undefined, true]]);
  });
});

describe('matchesRow: date cells', () => {
  it('compares the day of stored dates with and without time', () => {
    table('Date', 'is', null, [['2024-03-06', true], ['2024-03-06 23:59', true], ['2024-03-07 00:00', false], ['2024-03-05', false]], 'today');
    table('Date', 'is', null, [['2024-03-07', true]], 'tomorrow');
    table('Date', 'is', null, [['2024-03-05 08:00', true]], 'yesterday');
    table('Date', 'is', null, [['2024-02-28', true]], 'one_week_ago');
    table('Date', 'is', null, [['2024-03-13', true]], 'one_week_from_now');
    table('Date', 'is', null, [['2024-02-06', true]], 'one_month_ago');
    table('Date', 'is', null, [['2024-04-06', true]], 'one_month_from_now');
    table('Date', 'is', 5, [['2024-03-01', true], ['2024-03-02', false]], 'number_of_days_ago');
    table('Date', 'is', '-1', [['2024-03-05', true]], 'number_of_days_from_now');
    table('Date', 'is', '2024-02-29', [['2024-02-29 12:00', true], ['2024-03-01', false]], 'exact_date');
  });

  it('treats invalid strings and non-strings as empty', () => {
    table('Date', 'is_empty', undefined, [[undefined, true], ['', true], ['soon', true], ['2024-3-6', true], [20240306, true], [['2024-03-06'], true], ['2024-03-06', false], ['2024-13-45', false]]);
    table('Date', 'is_not_empty', undefined, [['2024-03-06T10:00', true], ['2024-03-0', false]]);
  });

  it('orders days for before / after, excluding empty cells', () => {
    const mod = 'today';
    table('Date', 'is_before', null, [['2024-03-05 23:59', true], ['2024-03-06 00:00', false], [undefined, false], ['x', false]], mod);
    table('Date', 'is_after', null, [['2024-03-06 23:59', false], ['2024-03-07', true], [undefined, false]], mod);
    table('Date', 'is_on_or_before', null, [['2024-03-06 23:59', true], ['2024-03-07', false]], mod);
    table('Date', 'is_on_or_after', null, [['2024-03-06', true], ['2024-03-05 23:59', false]], mod);
    table('Date', 'is_not', null, [['2024-03-06 10:00', false], ['2024-03-05', true], [undefined, false], ['', false], ['junk', false]], mod);
  });

  it('compares minutes for exact_date_time (a bare date is 00:00)', () => {
    const mod = 'exact_date_time';
    table('Date', 'is', '2024-03-06 10:30', [['2024-03-06 10:30', true], ['2024-03-06 10:31', false], ['2024-03-06', false]], mod);
    table('Date', 'is', '2024-03-06T00:00:59', [['2024-03-06', true], ['2024-03-06 00:00', true]], mod);
    table('Date', 'is_after', '2024-03-06 10:30', [['2024-03-06 10:31', true], ['2024-03-06 10:30', false]], mod);
    table('Date', 'is_before', '2024-03-06 00:01', [['2024-03-06', true], ['2024-03-06 00:01', false]], mod);
    table('Date', 'is_not', '2024-03-06 10:30', [['2024-03-06 10:29', true], ['2024-03-06 10:30', false], [undefined, false]], mod);
  });

  it('resolves every is_within range (weeks Monday–Sunday)', () => {
    const within = (modifier: string, term: unknown, pairs: [unknown, boolean][]) => table('Date', 'is_within', term, pairs, modifier);
    within('this_week', null, [['2024-03-04', true], ['2024-03-10 23:59', true], ['2024-03-03', false], ['2024-03-11', false]]);
    within('the_past_week', null, [['2024-02-26', true], ['2024-03-03', true], ['2024-02-25', false], ['2024-03-04', false]]);
    within('the_next_week', null, [['2024-03-11', true], ['2024-03-17', true], ['2024-03-10', false], ['2024-03-18', false]]);
    within('this_month', null, [['2024-03-01', true], ['2024-03-31', true], ['2024-02-29', false], ['2024-04-01', false]]);
    within('the_past_month', null, [['2024-02-01', true], ['2024-02-29', true], ['2024-01-31', false], ['2024-03-01', false]]);
    within('the_next_month', null, [['2024-04-01', true], ['2024-04-30', true], ['2024-05-01', false]]);
    within('this_year', null, [['2024-01-01', true], ['2024-12-31 23:59', true], ['2025-01-01', false]]);
    within('the_past_year', null, [['2023-01-01', true], ['2023-12-31', true], ['2024-01-01', false], ['2022-12-31', false]]);
    within('the_next_year', null, [['2025-06-15', true], ['2026-01-01', false]]);
    within('the_next_numbers_of_days', 3, [['2024-03-06', true], ['2024-03-09', true], ['2024-03-10', false], ['2024-03-05', false]]);
    within('the_past_numbers_of_days', '3', [['2024-03-03', true], ['2024-03-06', true], ['2024-03-02', false], ['2024-03-07', false]]);
    within('this_week', null, [[undefined, false], ['not a date', false]]);
  });

  it('handles week and month edges of "today"', () => {
    const sunday = { ...CTX, now: Date.UTC(2024, 2, 10, 12) };
    table('Date', 'is_within', null, [['2024-03-04', true], ['2024-03-10', true], ['2024-03-11', false]], 'this_week', sunday);
    const monday = { ...CTX, now: Date.UTC(2024, 2, 11, 0) };
    table('Date', 'is_within', null, [['2024-03-04', true], ['2024-03-10', true], ['2024-03-11', false]], 'the_past_week', monday);
    const march31 = { ...CTX, now: Date.UTC(2024, 2, 31, 12) };
    table('Date', 'is', null, [['2024-02-29', true]], 'one_month_ago', march31);
    table('Date', 'is', null, [['2024-04-30', true]], 'one_month_from_now', march31);
    const january = { ...CTX, now: Date.UTC(2024, 0, 15) };
    table('Date', 'is_within', null, [['2023-12-01', true], ['2023-12-31', true], ['2024-01-01', false]], 'the_past_month', january);
  });

  it('takes "today" in the context time zone', () => {
    // 2024-03-06 10:00 UTC is already 2024-03-06 23:00 in Auckland and still 2024-03-06 02:00 in Los Angeles…
    const auckland = { ...CTX, timeZone: 'Pacific/Auckland' };
    table('Date', 'is', null, [['2024-03-06', true]], 'today', auckland);
    // …and 2024-03-06 12:00 UTC is 2024-03-07 01:00 in Auckland.
    const later = { ...auckland, now: Date.UTC(2024, 2, 6, 12) };
    table('Date', 'is', null, [['2024-03-07', true], ['2024-03-06', false]], 'today', later);
    const losAngeles = { ...CTX, timeZone: 'America/Los_Angeles', now: Date.UTC(2024, 2, 6, 5) };
    table('Date', 'is', null, [['2024-03-05', true], ['2024-03-06', false]], 'today', losAngeles);
  });

  it('ignores a comparison without modifier or with a blank day term', () => {
    table('Date', 'is', '2024-01-01', [['2030-01-01', true], [undefined, true]]);
    table('Date', 'is', '', [['2030-01-01', true]], 'exact_date');
    table('Date', 'is_within', null, [['2030-01-01', true]], 'the_next_numbers_of_days');
  });

  it('selects the near-deadline window today ≤ date ≤ today + 2', () => {
    const window = [f('Date', 'is_on_or_after', null, 'today'), f('Date', 'is_before', 3, 'number_of_days_from_now')];
    const at = (value: unknown) => matches(window, row({ dt00: value }));
    expect([at('2024-03-05 23:59'), at('2024-03-06'), at('2024-03-08 23:59'), at('2024-03-09'), at(undefined)]).toEqual([false, true, true, false, false]);
  });
});

describe('matchesRow: ctime / mtime', () => {
  const zone = { ...CTX, timeZone: 'Europe/Berlin' }; // today = 2024-03-06, starting 2024-03-05T23:00Z
  const created = (ms: number) => row({}, { _ctime: ms });

  it('uses local days in the context zone with exact midnight boundaries', () => {
    const midnight = Date.UTC(2024, 2, 5, 23);
    const is = (modifier: string, ms: number) => matches([f('Created', 'is', null, modifier)], created(ms), zone);
    expect(is('today', midnight)).toBe(true);
    expect(is('today', midnight - 1)).toBe(false);
    expect(is('yesterday', midnight - 1)).toBe(true);
    expect(is('today', midnight + 24 * 3_600_000 - 1)).toBe(true);
    expect(is('tomorrow', midnight + 24 * 3_600_000)).toBe(true);
    expect(matches([f('Created', 'is_before', null, 'today')], created(midnight - 1), zone)).toBe(true);
    expect(matches([f('Created', 'is_after', null, 'today')], created(midnight), zone)).toBe(false);
    expect(matches([f('Created', 'is_not', null, 'today')], created(midnight), zone)).toBe(false);
    expect(matches([f('Created', 'is_within', null, 'this_week')], created(Date.UTC(2024, 2, 3, 23)), zone)).toBe(true);
    expect(matches([f('Created', 'is_within', null, 'this_week')], created(Date.UTC(2024, 2, 3, 22, 59)), zone)).toBe(false);
    expect(matches([f('Created', 'is', '2024-03-06 00:00', 'exact_date_time')], created(midnight + 59_999), zone)).toBe(true);
    expect(matches([f('Created', 'is', '2024-03-06 00:00', 'exact_date_time')], created(midnight + 60_000), zone)).toBe(false);
  });

  it('is never empty, and mtime is read from the row', () => {
    expect(matches([f('Created', 'is_empty')], created(0))).toBe(false);
    expect(matches([f('Modified', 'is_not_empty')], created(0))).toBe(true);
    expect(matches([f('Modified', 'is', null, 'today')], row({}, { _mtime: CTX.now }))).toBe(true);
    expect(matches([f('Modified', 'is', null, 'today')], row({}, { _mtime: 0 }))).toBe(false);
  });
});

describe('matchesRow: selects and people', () => {
  it('single-select by name or option id; negations keep empty cells', () => {
    table('Single', 'is', 'id01', [['One', true], ['one', false], ['Two', false], [undefined, false]]);
    table('Single', 'is', 'One', [['One', true]]);
    table('Single', 'is_not', 'id01', [['One', false], ['Two', true], [undefined, true], ['', true]]);
    table('Single', 'is_any_of', ['id01', 'Two'], [['One', true], ['Two', true], ['Three', false], [undefined, false]]);
    table('Single', 'is_any_of', 'id02', [['Two', true]]);
    table('Single', 'is_none_of', ['id01'], [['One', false], ['Two', true], [null, true]]);
    table('Single', 'is_empty', undefined, [['', true], [null, true], ['One', false]]);
  });

  it('multiple-select set predicates look at string elements of arrays', () => {
    table('Multi', 'has_any_of', ['id01', 'Three'], [[['One'], true], [['Three', 'x'], true], [['Two'], false], ['One', false], [[], false], [undefined, false]]);
    table('Multi', 'has_all_of', ['One', 'id02'], [[['Two', 'One', 'x'], true], [['One'], false], [['One', 'One'], false]]);
    table('Multi', 'has_none_of', ['One'], [[['One', 'Two'], false], [['Two'], true], [[], true], [undefined, true], ['One', true]]);
    table('Multi', 'is_exactly', ['One', 'Two'], [[['Two', 'One'], true], [['One', 'Two', 'One'], true], [['One'], false], [['One', 'Two', 'x'], false], [['One', 'Two', 2], false]]);
    table('Multi', 'is_empty', undefined, [[[], true], [null, true], [['One'], false]]);
    table('Multi', 'has_any_of', [], [[['One'], true], [undefined, true]]);
  });

  it('collaborator predicates and include_me', () => {
    table('Collab', 'has_any_of', [ME], [[[ME, YOU], true], [[YOU], false], [ME, false]]);
    table('Collab', 'has_all_of', [ME, YOU], [[[YOU, ME], true], [[ME], false]]);
    table('Collab', 'has_none_of', YOU, [[[ME], true], [[YOU], false], [undefined, true]]);
    table('Collab', 'is_exactly', [ME], [[[ME], true], [[ME, YOU], false]]);
    table('Collab', 'include_me', undefined, [[[YOU, ME], true], [[YOU], false], [undefined, false]]);
    table('Collab', 'include_me', undefined, [[[ME], false]], undefined, { ...CTX, currentUser: '' });
  });

  it('creator and last-modifier compare the row columns, app names included', () => {
    const by = (creator: string | null, modifier = YOU) => row({}, { _creator: creator as string, _last_modifier: modifier });
    expect(matches([f('Creator', 'contains', [YOU, ME])], by(ME))).toBe(true);
    expect(matches([f('Creator', 'contains', [YOU])], by(ME))).toBe(false);
    expect(matches([f('Creator', 'does_not_contain', [YOU])], by(ME))).toBe(true);
    expect(matches([f('Creator', 'does_not_contain', [ME])], by(ME))).toBe(false);
    expect(matches([f('Creator', 'does_not_contain', [ME])], by(null))).toBe(true);
    expect(matches([f('Creator', 'is', [YOU, ME])], by(ME))).toBe(false); // first user only
    expect(matches([f('Creator', 'is', ME)], by(ME))).toBe(true);
    expect(matches([f('Creator', 'is_not', [ME])], by(ME))).toBe(false);
    expect(matches([f('Creator', 'is_not', [ME])], by(''))).toBe(true);
    expect(matches([f('Creator', 'include_me')], by(ME))).toBe(true);
    expect(matches([f('Creator', 'include_me')], by(ME), { ...CTX, currentUser: undefined })).toBe(false);
    expect(matches([f('Modifier', 'is', 'my-app')], by(ME, 'my-app'))).toBe(true);
    expect(matches([f('Modifier', 'include_me')], by(YOU, ME))).toBe(true);
    expect(matches([f('Creator', 'contains', [])], by(ME))).toBe(true); // blank term: ignored
  });

  it('file, image and long-text only know emptiness', () => {
    table('File', 'is_empty', undefined, [[[], true], [undefined, true], [[{ name: 'a' }], false]]);
    table('Image', 'is_not_empty', undefined, [[['x.png'], true], [[], false]]);
    table('Long', 'is_empty', undefined, [['', true], ['text', false]]);
  });
});

describe('matchesRow: groups', () => {
  const r = row({ tx00: 'Alpha', nb00: 5 });
  const yes = f('Text', 'is', 'Alpha');
  const no = f('Number', 'greater', 10);
  const ignored = f('Text', 'contains', '');

  it('joins with And by default and Or on request', () => {
    expect(matches([yes, no], r)).toBe(false);
    expect(matches([yes, no], r, CTX, 'Or')).toBe(true);
    expect(matches([no, no], r, CTX, 'Or')).toBe(false);
    expect(matches([], r)).toBe(true);
  });

  it('drops ignored items instead of treating them as true', () => {
    expect(matches([ignored, no], r, CTX, 'Or')).toBe(false);
    expect(matches([ignored], r, CTX, 'Or')).toBe(true);
    expect(matches([no, { filters: [ignored], filter_conjunction: 'Or' }], r, CTX, 'Or')).toBe(false);
  });

  it('evaluates nested groups', () => {
    expect(matches([yes, { filter_conjunction: 'Or', filters: [no, { filters: [yes, f('Number', 'equal', 5)] }] }], r)).toBe(true);
    expect(matches([yes, { filter_conjunction: 'Or', filters: [no, { filters: [yes, f('Number', 'equal', 6)] }] }], r)).toBe(false);
  });

  it('re-resolves dates when the context changes', () => {
    const parsed = parseFilters({ filters: [f('Date', 'is', null, 'today')] }, COLUMNS);
    if (!parsed.ok) throw new Error(parsed.error);
    const target = row({ dt00: '2024-03-06' });
    expect(matchesRow(parsed.filter, target, CTX)).toBe(true);
    expect(matchesRow(parsed.filter, target, { ...CTX, now: CTX.now + 86_400_000 })).toBe(false);
    expect(matchesRow(parsed.filter, target, { ...CTX, timeZone: 'Pacific/Kiritimati' })).toBe(false);
    expect(matchesRow(parsed.filter, target, CTX)).toBe(true);
  });
});
