import { describe, expect, it } from 'vitest';
import { newColumn } from './default-metadata.js';
import { cellValue, displayText, isoMillis, presentRow, rowByKeys, type StoredRow } from './present.js';
import { parseConvertKeys } from './rows.service.js';
import { gatewayPathFor } from './base.routes.js';

const row: StoredRow = {
  _id: 'r'.repeat(22),
  _ctime: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  _mtime: Date.UTC(2026, 0, 3),
  _creator: 'c@auth.local',
  _last_modifier: 'm@auth.local',
  data: { a: 'x', b: 3, t: ['p', 'q'], f: [{ name: 'f.txt', url: '/f' }], o: { lat: 1 } },
};
const columns = [
  newColumn('a', 'Text', 'text', null),
  newColumn('b', 'Num', 'number', null),
  newColumn('e', 'Empty', 'text', null),
  newColumn('c', 'Created', 'ctime', null),
  newColumn('m', 'Modified', 'mtime', null),
  newColumn('u', 'Author', 'creator', null),
  newColumn('v', 'Editor', 'last-modifier', null),
  newColumn('l', 'Link', 'link', null),
  newColumn('x', 'Button', 'button', null),
];

describe('presentRow', () => {
  it('shows every column, computed ones from the row, empty ones as null, links as lists', () => {
    const links = new Map([['l', new Map([[row._id, [{ row_id: 'o'.repeat(22), display_value: 'other' }]]])]]);
    expect(presentRow(row, columns, true, links)).toEqual({
      _id: row._id,
      _ctime: '2026-01-02T03:04:05.006+00:00',
      _mtime: '2026-01-03T00:00:00.000+00:00',
      _creator: 'c@auth.local',
      _last_modifier: 'm@auth.local',
      _archived: false,
      _locked: null,
      _locked_by: null,
      Text: 'x',
      Num: 3,
      Empty: null,
      Created: '2026-01-02T03:04:05.006+00:00',
      Modified: '2026-01-03T00:00:00.000+00:00',
      Author: 'c@auth.local',
      Editor: 'm@auth.local',
      Link: [{ row_id: 'o'.repeat(22), display_value: 'other' }],
      Button: null,
    });
  });

  it('keys by column key when asked and gives link cells without links an empty list', () => {
    const out = presentRow(row, columns, false);
    expect(out.a).toBe('x');
    expect(out.l).toEqual([]);
    expect(out).not.toHaveProperty('Text');
  });

  it('rowByKeys carries the stored cells and the row fields', () => {
    expect(rowByKeys(row)).toEqual({ _id: row._id, _ctime: isoMillis(row._ctime), _mtime: isoMillis(row._mtime), _creator: 'c@auth.local', _last_modifier: 'm@auth.local', ...row.data });
  });

  it('renders display text of each kind of cell', () => {
    expect(displayText(newColumn('a', 'A', 'text', null), row)).toBe('x');
    expect(displayText(newColumn('b', 'B', 'number', null), row)).toBe('3');
    expect(displayText(newColumn('t', 'T', 'multiple-select', null), row)).toBe('p, q');
    expect(displayText(newColumn('f', 'F', 'file', null), row)).toBe('f.txt');
    expect(displayText(newColumn('o', 'O', 'geolocation', null), row)).toBe('{"lat":1}');
    expect(displayText(newColumn('z', 'Z', 'text', null), row)).toBe('');
    expect(displayText(undefined, row)).toBe('');
    expect(cellValue(newColumn('u', 'U', 'creator', null), row)).toBe('c@auth.local');
  });
});

describe('parseConvertKeys', () => {
  it('reads the spellings clients send', () => {
    for (const v of ['true', 'True', 'TRUE', '1', true]) expect(parseConvertKeys(v, false)).toBe(true);
    for (const v of ['false', 'False', '0', false]) expect(parseConvertKeys(v, true)).toBe(false);
    expect(parseConvertKeys(undefined, true)).toBe(true);
    expect(parseConvertKeys('', false)).toBe(false);
    expect(() => parseConvertKeys('yes', false)).toThrow('convert_keys invalid.');
  });
});

describe('gatewayPathFor', () => {
  const uuid = '650d8a0d7e2746a88b186cc6f3db2057';
  it('maps removed paths to their /api-gateway/ replacement', () => {
    expect(gatewayPathFor(`/dtable-server/api/v1/dtables/${uuid}/filtered-rows/`)).toBe(`/api-gateway/api/v2/dtables/${uuid}/filtered-rows/`);
    expect(gatewayPathFor(`/dtable-server/api/v1/dtables/${uuid}/batch-delete-rows/`)).toBe(`/api-gateway/api/v2/dtables/${uuid}/rows/`);
    expect(gatewayPathFor(`/dtable-db/api/v1/query/${uuid}`)).toBe(`/api-gateway/api/v2/dtables/${uuid}/sql/`);
    expect(gatewayPathFor('/dtable-db/')).toBe('/api-gateway/api/v2/dtables/{base_uuid}/…');
  });
});
