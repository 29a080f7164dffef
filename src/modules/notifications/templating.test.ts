import { describe, expect, it } from 'vitest';
import type { StoredRow } from '../filters/index.js';
import type { MetaTable } from './metadata-doc.js';
import { formatDate, formatDuration, formatNumber, renderMessage } from './templating.js';

const BOB = 'b'.repeat(32) + '@auth.local';
const table: MetaTable = {
  _id: 'T',
  name: 'T',
  views: [],
  columns: [
    { key: 'n', name: 'Name', type: 'text', data: null },
    { key: 'lt', name: 'Long', type: 'long-text', data: null },
    { key: 's', name: 'Status', type: 'single-select', data: null },
    { key: 'm', name: 'Tags', type: 'multiple-select', data: null },
    { key: 'p', name: 'Price', type: 'number', data: { format: 'dollar' } },
    { key: 'pc', name: 'Share', type: 'number', data: { format: 'percent' } },
    { key: 'num', name: 'Count', type: 'number', data: { format: 'number', thousands: 'comma', enable_precision: true, precision: 1 } },
    { key: 'd', name: 'Due', type: 'date', data: { format: 'DD.MM.YYYY HH:mm' } },
    { key: 'du', name: 'Spent', type: 'duration', data: { duration_format: 'h:mm:ss' } },
    { key: 'c', name: 'Done', type: 'checkbox', data: null },
    { key: 'who', name: 'Assignee', type: 'collaborator', data: null },
    { key: 'f', name: 'Files', type: 'file', data: null },
    { key: 'img', name: 'Pictures', type: 'image', data: null },
    { key: 'r', name: 'Stars', type: 'rate', data: null },
    { key: 'l', name: 'Link', type: 'link', data: null },
    { key: 'fo', name: 'Formula', type: 'formula', data: null },
    { key: 'g', name: 'Place', type: 'geolocation', data: null },
    { key: 'cr', name: 'Creator', type: 'creator', data: null },
    { key: 'lm', name: 'Modifier', type: 'last-modifier', data: null },
    { key: 'ct', name: 'Created', type: 'ctime', data: null },
    { key: 'e', name: 'Empty', type: 'text', data: null },
  ],
};

const row: StoredRow = {
  _id: 'r',
  _ctime: Date.UTC(2026, 0, 5, 23, 30),
  _mtime: 0,
  _creator: BOB,
  _last_modifier: 'my-app',
  data: {
    n: 'Task',
    lt: 'line',
    s: 'Open',
    m: ['a', 'b'],
    p: 12.5,
    pc: 0.25,
    num: 1234567.25,
    d: '2026-03-04 05:06',
    du: 3725,
    c: true,
    who: [BOB, 'x@auth.local'],
    f: [{ name: 'a.pdf', url: 'http://x/a.pdf' }],
    img: ['http://x/images/p%20q.png'],
    r: 4,
    l: ['rowid1'],
    fo: 'computed',
    g: { country_region: 'DE', city: 'Berlin', lng: 13.4, lat: 52.5 },
  },
};

const ctx = { timeZone: 'Europe/Berlin', userName: (id: string) => (id === BOB ? 'Bob' : id) };

describe('renderMessage', () => {
  it.each<[string, string]>([
    ['{Name}', 'Task'],
    ['{Long}', 'line'],
    ['{Status}', 'Open'],
    ['{Tags}', 'a, b'],
    ['{Price}', '$12.50'],
    ['{Share}', '25%'],
    ['{Count}', '1,234,567.3'],
    ['{Due}', '04.03.2026 05:06'],
    ['{Spent}', '1:02:05'],
    ['{Done}', 'true'],
    ['{Assignee}', 'Bob, x@auth.local'],
    ['{Files}', 'a.pdf'],
    ['{Pictures}', 'p q.png'],
    ['{Stars}', '4'],
    ['{Place}', 'DE Berlin lng: 13.4, lat: 52.5'],
    ['{Creator}', 'Bob'],
    ['{Modifier}', 'my-app'],
    ['{Created}', '2026-01-06 00:30'],
    ['{Empty}', ''],
  ])('%s → %s', (template, expected) => {
    expect(renderMessage(template, table, row, ctx)).toBe(expected);
  });

  it('leaves unknown names, link row ids and unformatted types as written', () => {
    expect(renderMessage('{Nope} {Link} {Formula}', table, row, ctx)).toBe('{Nope} {Link} {Formula}');
  });

  it('replaces every occurrence and keeps the surrounding text', () => {
    expect(renderMessage('Hi {Name}! {Name} is {Status}. {', table, row, ctx)).toBe('Hi Task! Task is Open. {');
  });

  it('shows an unchecked checkbox as false and a missing one as empty', () => {
    expect(renderMessage('{Done}', table, { ...row, data: { c: false } }, ctx)).toBe('false');
    expect(renderMessage('{Done}', table, { ...row, data: {} }, ctx)).toBe('');
  });
});

describe('formatters', () => {
  it('formats numbers', () => {
    expect(formatNumber(0.1 + 0.2, null)).toBe('0.3');
    expect(formatNumber(1000, { format: 'euro', decimal: 'comma', thousands: 'dot' })).toBe('1.000,00 €');
    expect(formatNumber(5, { format: 'yuan' })).toBe('¥5.00');
    expect(formatNumber(1234.5, { thousands: 'space' })).toBe('1 234.5');
  });

  it('formats durations', () => {
    expect(formatDuration(3725, null)).toBe('1:02');
    expect(formatDuration(-60, { duration_format: 'h:mm:ss' })).toBe('-0:01:00');
  });

  it('formats dates', () => {
    expect(formatDate('2026-03-04', { format: 'M/D/YYYY' })).toBe('3/4/2026');
    expect(formatDate('2026-03-04 05:06', null)).toBe('2026-03-04');
    expect(formatDate('2026-03-04', { format: 'YYYY-MM-DD HH:mm' })).toBe('2026-03-04');
    expect(formatDate('soon', null)).toBe('soon');
  });
});
