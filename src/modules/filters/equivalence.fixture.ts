/**
 * Data for the equivalence suite: 30 rows covering empty values (missing, null, "", []), Unicode, numbers
 * stored as strings, dates with and without time, invalid dates, boundary instants around "today" in a
 * non-UTC zone and around a DST change; plus a seeded generator of random filters over the same columns.
 */
import { familyOf, predicatesOf } from './predicates.js';
import type { FilterColumn, FilterContext, StoredRow } from './types.js';
import { seededRandom } from '../../shared/seeded-random.js';

export const U1 = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@auth.local';
export const U2 = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb@auth.local';
export const U3 = 'cccccccccccccccccccccccccccccccc@auth.local';

export const COLUMNS: FilterColumn[] = [
  { key: '0000', name: 'Name', type: 'text', data: null },
  { key: 'Lt00', name: 'Notes', type: 'long-text', data: null },
  { key: 'Nb00', name: 'Amount', type: 'number', data: { format: 'number' } },
  { key: 'Du00', name: 'Spent', type: 'duration', data: { format: 'duration', duration_format: 'h:mm' } },
  { key: 'Rt00', name: 'Stars', type: 'rate', data: { rate_max_number: 5 } },
  { key: 'Cb00', name: 'Done', type: 'checkbox', data: null },
  { key: 'Dt00', name: 'Due', type: 'date', data: { format: 'YYYY-MM-DD HH:mm' } },
  {
    key: 'Ss00',
    name: 'Status',
    type: 'single-select',
    data: { options: [{ id: 'o001', name: 'Open' }, { id: 'o002', name: 'Closed' }, { id: 'o003', name: 'Ärger' }] },
  },
  {
    key: 'Ms00',
    name: 'Tags',
    type: 'multiple-select',
    data: { options: [{ id: 't001', name: 'red' }, { id: 't002', name: 'blue' }, { id: 't003', name: 'green' }] },
  },
  { key: 'Co00', name: 'People', type: 'collaborator', data: null },
  { key: 'Cr00', name: 'Creator', type: 'creator', data: null },
  { key: 'Lm00', name: 'Modifier', type: 'last-modifier', data: null },
  { key: 'Ct00', name: 'Created', type: 'ctime', data: null },
  { key: 'Mt00', name: 'Modified', type: 'mtime', data: null },
  { key: 'Em00', name: 'Mail', type: 'email', data: null },
  { key: 'Ur00', name: 'Link', type: 'url', data: null },
  { key: 'An00', name: 'No', type: 'auto-number', data: null },
  { key: 'Fi00', name: 'Files', type: 'file', data: null },
  { key: 'Im00', name: 'Pics', type: 'image', data: null },
  // Formula cells, materialized with their result type (dates as RFC 3339 in the zone).
  { key: 'Fn00', name: 'Total', type: 'formula', data: { formula: '{Amount} * 2', result_type: 'number' } },
  { key: 'Ft00', name: 'Label', type: 'formula', data: { formula: 'upper({Name})', result_type: 'string' } },
  { key: 'Fd00', name: 'Deadline', type: 'formula', data: { formula: 'dateAdd({Due}, 1)', result_type: 'date' } },
  { key: 'Fb00', name: 'Ok', type: 'formula', data: { formula: '{Amount} > 5', result_type: 'bool' } },
  { key: 'Lf00', name: 'Lookup', type: 'link-formula', data: { formula: 'lookup', result_type: 'array' } },
  // Keys that would break a naively built JSON path.
  { key: 'a.b $[0]', name: 'Odd key', type: 'text', data: null },
];

// 2024-03-05 12:30 UTC = 2024-03-06 01:30 in Auckland (NZDT, +13): "today" differs from UTC.
export const NOW = Date.UTC(2024, 2, 5, 12, 30);
const AKL_MIDNIGHT = Date.UTC(2024, 2, 5, 11, 0); // 2024-03-06 00:00 Auckland
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const CONTEXTS: Record<string, FilterContext> = {
  auckland: { now: NOW, timeZone: 'Pacific/Auckland', currentUser: U1 },
  utc: { now: NOW, timeZone: 'UTC' },
  // The morning after New York's spring-forward night (2024-03-10 02:00 → 03:00).
  newYork: { now: Date.UTC(2024, 2, 10, 12, 0), timeZone: 'America/New_York', currentUser: U2 },
};

type Meta = { ctime?: number; mtime?: number; creator?: string | null; modifier?: string | null };
export const ROWS: StoredRow[] = [];
function row(id: string, data: Record<string, unknown>, meta: Meta = {}) {
  const n = ROWS.length;
  ROWS.push({
    _id: id,
    _ctime: meta.ctime ?? NOW - (n + 2) * DAY,
    _mtime: meta.mtime ?? NOW - n * HOUR,
    _creator: (meta.creator === undefined ? (n % 2 ? U1 : U2) : meta.creator) as string,
    _last_modifier: (meta.modifier === undefined ? (n % 3 ? U2 : 'my-app') : meta.modifier) as string,
    data,
  });
}

row('r01', { '0000': 'Alpha', Nb00: 10, Cb00: true, Dt00: '2024-03-06', Ss00: 'Open', Ms00: ['red', 'blue'], Co00: [U1], Du00: 3600, Rt00: 5 }, { ctime: AKL_MIDNIGHT, creator: U1 });
row('r02', { '0000': 'alphabet soup', Nb00: 10.5, Cb00: false, Dt00: '2024-03-06 23:59', Ss00: 'Closed', Ms00: ['red'], Co00: [U1, U2], Du00: 5400 }, { ctime: AKL_MIDNIGHT - 1, creator: U2 });
row('r03', { '0000': 'ÄLPHA unicode', Nb00: -3, Dt00: '2024-03-05', Ss00: 'Ärger', Ms00: ['blue', 'red'], Co00: [U2], Rt00: 1 }, { creator: U1 });
row('r04', { '0000': '', Nb00: '12', Dt00: '', Ss00: '', Ms00: [], Co00: [], Lt00: '' });
row('r05', {});
row('r06', { '0000': null, Nb00: null, Cb00: null, Dt00: null, Ss00: null, Ms00: null, Co00: null, Fi00: null });
row('r07', { '0000': 'Beta', Nb00: 0, Cb00: 'true', Dt00: '2024-03-07 00:00', Ss00: 'open', Ms00: ['Red'], Co00: [U3] });
row('r08', { '0000': 'beta', Nb00: 1e21, Dt00: '2024-02-28', Ss00: 'Closed', Ms00: ['green', 'red', 'blue'], Co00: [U1, U2, U3] });
row('r09', { '0000': 12, Nb00: 2.5, Dt00: 'not a date', Ms00: 'red', Co00: U1, Cb00: 1 });
row('r10', { '0000': 'gamma%_', Dt00: '2024-03-13', Ms00: ['red', 'red'], Nb00: 10 });
row('r11', { '0000': 'GAMMA', Dt00: '2024-02-06', Ms00: ['blue', 1], Nb00: 9.999 });
row('r12', { '0000': 'x"quote\\', Dt00: '2024-04-06', Ms00: [['red']], Nb00: -0.5 });
row('r13', { '0000': 'emoji 😀 test', Dt00: '2024-03-04' });
row('r14', { '0000': ' spaced ', Dt00: '2024-03-10' });
row('r15', { '0000': 'Alpha', Dt00: '2024-03-11' }, { creator: 'my-app' });
row('r16', { Dt00: '2024-03-03' }, { creator: '' });
row('r17', { Dt00: '2024-02-26' }, { creator: null });
row('r18', { Dt00: '2024-02-01' });
row('r19', { Dt00: '2024-01-31' });
row('r20', { Dt00: '2023-12-31' });
row('r21', { Dt00: '2025-01-01' });
row('r22', { Dt00: '2024-03-05 23:30' }, { ctime: Date.UTC(2024, 2, 10, 5, 0) }); // 00:00 in New York
row('r23', { Dt00: '2024-03-06 00:00' }, { ctime: Date.UTC(2024, 2, 10, 4, 59, 59) });
row('r24', { Dt00: '2024-03-06 01:30' }, { ctime: Date.UTC(2024, 2, 11, 4, 0), mtime: NOW });
row('r25', { Dt00: 20240306, Cb00: 1 });
row('r26', { Dt00: '2024-3-6' });
row('r27', { Dt00: '2024-03-16' });
row('r28', { Em00: 'Bob@Example.com', Ur00: 'https://example.com/A', An00: '0001', Du00: 59, Rt00: 3, 'a.b $[0]': 'odd' });
row('r29', { Fi00: [{ name: 'a.pdf', url: 'x' }], Im00: ['http://x/img.png'], Lt00: 'long text', An00: '0002' });
row('r30', { Fi00: [], Im00: [], Lt00: '', Cb00: false, Dt00: '2024-03-06T08:00' });
Object.assign(ROWS[0]!.data, { Fn00: 20, Ft00: 'ALPHA', Fd00: '2024-03-07T00:00:00+13:00', Fb00: true, Lf00: ['red', 'blue'] });
Object.assign(ROWS[1]!.data, { Fn00: 21, Ft00: 'ALPHABET SOUP', Fd00: '2024-03-06T08:00:00+00:00', Fb00: true, Lf00: ['green'] });
Object.assign(ROWS[2]!.data, { Fn00: -6, Ft00: 'ÄLPHA UNICODE', Fd00: '2024-03-05T00:00:00-05:00', Fb00: false, Lf00: [] });
Object.assign(ROWS[7]!.data, { Fn00: 0, Fd00: '2024-02-29T00:00:00+00:00', Fb00: false });

// ---- random filters built from the same vocabulary as the data (seeded, so failures reproduce) ----

/** The tests' seeded generator (`shared/seeded-random.ts`), under the name the filter tests use. */
export const prng = seededRandom;

const TERMS: unknown[] = [
  null, '', 'a', 'Alpha', 'BETA', 'gamma', 'ä', '😀', 'o001', 'Closed', 'red', 't002', 'green', U1, U2, 'my-app', [U1, U2], ['red', 'blue'],
  ['t001'], [U3], 0, 10, '2.5', -1, 1e21, 3, 7, '1:30', true, false, '2024-03-06', '2024-02-28', '2024-03-06 01:30', '2024-03-10 00:00',
];
const MODIFIERS = [
  undefined, 'today', 'tomorrow', 'yesterday', 'one_week_ago', 'one_week_from_now', 'one_month_ago', 'one_month_from_now',
  'number_of_days_ago', 'number_of_days_from_now', 'exact_date', 'exact_date_time', 'the_past_week', 'this_week', 'the_next_week',
  'the_past_month', 'this_month', 'the_next_month', 'the_past_year', 'this_year', 'the_next_year', 'the_next_numbers_of_days',
  'the_past_numbers_of_days',
];

export function randomFilter(rand: () => number, depth = 0): unknown {
  const pick = <T>(pool: readonly T[]): T => pool[Math.floor(rand() * pool.length)] as T;
  if (depth < 3 && rand() < 0.3) {
    return { filter_conjunction: pick(['And', 'Or']), filters: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => randomFilter(rand, depth + 1)) };
  }
  const column = pick(COLUMNS);
  return {
    column_key: column.key,
    filter_predicate: pick(predicatesOf(familyOf(column.type, column.data))),
    filter_term: pick(TERMS),
    filter_term_modifier: pick(MODIFIERS),
  };
}

