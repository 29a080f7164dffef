import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { newColumn } from './default-metadata.js';
import { presentRow, presentRowByKeys, type LinkCell, type StoredRow } from './present.js';
import { byKeysPresenter, listingPresenter, parseRowText, rowJson, RowFragments } from './row-fragments.js';

/** A row text as the read queries answer it (rows.repository.ts `rowTextSql`). */
const textOf = (r: StoredRow) => `${JSON.stringify([r._id, r._ctime, r._mtime, r._creator, r._last_modifier])}\u0001${JSON.stringify(r.data)}`;

const row = (id: string, data: Record<string, unknown>, mtime = Date.UTC(2026, 0, 3)): StoredRow => ({
  _id: id.padEnd(22, 'x'),
  _ctime: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
  _mtime: mtime,
  _creator: 'c@auth.local',
  _last_modifier: 'm@auth.local',
  data,
});

// Odd but possible column names: integer-like ones (a JS object puts them first), a duplicate (the
// later column's value in the earlier one's place), one equal to a row field, quotes and non-ASCII.
const columns = [
  newColumn('a000', 'Text', 'text', null),
  newColumn('l000', 'Link', 'link', null),
  newColumn('b000', '10', 'number', null),
  newColumn('d000', 'Due', 'date', { format: 'YYYY-MM-DD HH:mm' }),
  newColumn('c000', '2', 'text', null),
  newColumn('e000', 'Text', 'long-text', null),
  newColumn('f000', '_id', 'text', null),
  newColumn('g000', 'Sägé "q"', 'multiple-select', null),
  newColumn('h000', 'Made', 'ctime', null),
  newColumn('k000', 'Other link', 'link', null),
  newColumn('x000', 'Button', 'button', null),
];

describe('row fragments', () => {
  it('present a row exactly as presentRow and JSON.stringify do, links spliced in', () => {
    const rows = [
      row('r1', { a000: 'x', b000: 3.5, d000: '2030-06-20 09:30', c000: null, e000: 'long', f000: 'shadow', g000: ['p', 'q'], _locked: true, _locked_by: 'me' }),
      row('r2', { a000: 'only' }),
      row('r3', { b000: 0, d000: '2030-01-01', _archived: true, e000: '\u2028 "quoted" \\ \u0001' }),
    ];
    const linkCells = new Map<string, Map<string, LinkCell[]>>([
      ['l000', new Map([[rows[0]!._id, [{ row_id: 'o1', display_value: 'one' }, { row_id: 'o2', display_value: 'two "2"' }]]])],
      ['k000', new Map([[rows[2]!._id, [{ row_id: 'o3', display_value: '' }]]])],
    ]);
    for (const byName of [true, false]) {
      const presenter = listingPresenter(columns, byName);
      const fragments = new RowFragments().fragments(1, presenter, rows.map(textOf));
      const links = presenter.linkKeys.map((key) => new Map([...(linkCells.get(key) ?? new Map<string, LinkCell[]>())].map(([id, cells]) => [id, JSON.stringify(cells)])));
      fragments.forEach((fragment, i) => {
        expect(rowJson(fragment, links)).toBe(JSON.stringify(presentRow(rows[i]!, columns, byName, linkCells)));
      });
      expect(fragments.map((f) => f.archived)).toEqual([false, false, true]);
    }
    const byKeys = byKeysPresenter(['d000']);
    const [whole] = new RowFragments().fragments(1, byKeys, [textOf(rows[0]!)]);
    expect(whole!.segments).toEqual([JSON.stringify(presentRowByKeys(rows[0]!, ['d000']))]);
  });

  it('parse a row text back into the row it came from', () => {
    const r = row('r9', { a000: 'x\u0001y', b000: [1, { z: null }] });
    expect(parseRowText(textOf(r))).toEqual(r);
  });

  it('reuse a fragment only for the very same row text, and replace it when the row changed', () => {
    const cache = new RowFragments();
    const presenter = listingPresenter(columns, true);
    const before = row('r1', { e000: 'old' });
    // Read once: presented, not kept; read again: kept.
    const [once] = cache.fragments(7, presenter, [textOf(before)]);
    expect(cache.stats.fragments).toBe(0);
    const [first] = cache.fragments(7, presenter, [textOf(before)]);
    expect(first).not.toBe(once);
    expect(rowJson(first!, [])).toBe(rowJson(once!, []));
    expect(cache.fragments(7, presenter, [textOf(before)])[0]).toBe(first);
    const bytes = cache.stats.bytes;
    // Same mtime, other cells (a structural rewrite does not stamp rows): still a new fragment.
    const after = row('r1', { e000: 'new' });
    const [second] = cache.fragments(7, presenter, [textOf(after)]);
    expect(second).not.toBe(first);
    expect(rowJson(second!, [])).toBe(JSON.stringify(presentRow(after, columns, true)));
    expect(rowJson(second!, [])).toContain('"new"');
    expect(cache.stats).toMatchObject({ bases: 1, fragments: 1 });
    expect(cache.stats.bytes).toBe(bytes); // the old one's bytes went with it
    // Another presentation of the same row (other columns shown, keys instead of names) is its own fragment.
    const [byKey] = cache.fragments(7, listingPresenter(columns.slice(0, 3), false), [textOf(after)]);
    expect(Object.keys(JSON.parse(rowJson(byKey!, [])))).toContain('a000');
    cache.fragments(7, listingPresenter(columns.slice(0, 3), false), [textOf(after)]);
    expect(cache.stats.fragments).toBe(2);
  });

  it('keep within the per-base and total budgets, least recently used out first', () => {
    const presenter = listingPresenter(columns.slice(0, 1), true);
    const texts = (base: string, n: number) => Array.from({ length: n }, (_, i) => textOf(row(`${base}${i}`, { a000: 'y'.repeat(200) })));
    const cache = new RowFragments({ maxBytesPerBase: 10_000, maxBytes: 25_000 });
    // One read of 100 rows far above the base's budget: answered whole, only the most recent kept.
    const a = texts('a', 100);
    cache.fragments(1, presenter, a); // read once: kept on the second read
    const fragments = cache.fragments(1, presenter, a);
    expect(fragments).toHaveLength(100);
    expect(JSON.parse(rowJson(fragments[0]!, []))).toMatchObject({ Text: 'y'.repeat(200) });
    expect(cache.stats.bytes).toBeLessThanOrEqual(10_000);
    expect(cache.stats.bytes).toBeGreaterThan(9_000);
    const kept = cache.stats.fragments;
    expect(kept).toBeGreaterThan(5);
    expect(kept).toBeLessThan(100);
    // The most recently read rows are the ones kept: reading them again presents nothing new.
    const again = cache.fragments(1, presenter, a.slice(100 - kept));
    expect(again[0]).toBe(fragments[100 - kept]);
    expect(cache.stats.fragments).toBe(kept);
    // Across bases (each near its own budget): the least recently read base goes first.
    for (let twice = 0; twice < 2; twice++) cache.fragments(2, presenter, texts('b', 30));
    cache.fragments(1, presenter, [a[99]!]);
    for (let twice = 0; twice < 2; twice++) cache.fragments(3, presenter, texts('c', 30));
    expect(cache.stats.bytes).toBeLessThanOrEqual(25_000);
    expect(cache.stats.baseIds).toEqual([1, 3]);
    for (const id of [1, 3]) cache.forget(id);
    expect(cache.stats).toEqual({ bases: 0, baseIds: [], fragments: 0, bytes: 0 });
  });

  it('keep nothing of a read of every row, page after page, repeated (each row read once a pass)', () => {
    const presenter = listingPresenter(columns.slice(0, 1), true);
    const cache = new RowFragments();
    const pages = Array.from({ length: 40 }, (_, p) => Array.from({ length: 1000 }, (_, i) => textOf(row(`r${p * 1000 + i}`, { a000: `row ${i}` }))));
    for (let pass = 0; pass < 2; pass++) for (const page of pages) expect(cache.fragments(1, presenter, page)).toHaveLength(1000);
    expect(cache.stats.fragments).toBe(0);
    // A page read twice in a row is kept, and served from the cache after.
    const [page] = pages;
    cache.fragments(1, presenter, page!);
    const kept = cache.fragments(1, presenter, page!);
    expect(cache.stats.fragments).toBe(1000);
    expect(cache.fragments(1, presenter, page!)[500]).toBe(kept[500]);
  });

  it('keeps within its byte bound in the heap, for one-byte and wide texts', () => {
    // The heap after a full collection, before and after filling the cache well past its bound: what the
    // cache holds in memory, not only what it counts. (Segments built by `+=` were kept as trees of
    // concatenations: 3.5× the counted bytes.)
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const shown = [newColumn('a000', 'Title', 'text', null), newColumn('b000', 'Amount', 'number', null), newColumn('c000', 'Kind', 'single-select', null), newColumn('e000', 'Notes', 'long-text', null)];
    const presenter = listingPresenter(shown, true);
    const maxBytes = 8 * 1024 * 1024;
    for (const word of ['lorem ipsum ', '数据表格 ']) {
      const cache = new RowFragments({ maxBytes, maxBytesPerBase: maxBytes });
      const before = heap();
      for (let page = 0; page < 40; page++) {
        const texts = Array.from({ length: 1000 }, (_, i) => {
          const n = page * 1000 + i;
          // As a query answers them: flat strings, not built here by concatenation.
          return ` ${textOf(row(`r${n}`, { a000: `row ${n}`, b000: n, c000: 'alpha', e000: `${word.repeat(8)}${n}` }))}`.slice(1);
        });
        for (let twice = 0; twice < 2; twice++) cache.fragments(1, presenter, texts);
      }
      const kept = heap() - before;
      expect(cache.stats.bytes).toBeLessThanOrEqual(maxBytes);
      expect(cache.stats.fragments).toBeGreaterThan(5_000);
      expect(kept, `${word}: ${(kept / 2 ** 20).toFixed(1)} MB in the heap`).toBeLessThan(1.2 * maxBytes);
      cache.forget(1);
    }
  });
});
