import type { ColumnMeta } from './metadata.js';
import { cellValue, isoMillis, presentedValue, presentRowByKeys, type StoredRow } from './present.js';
import { lockFields } from './row-locks.js';
import { isDateColumn, zoneGeneration } from '../../shared/dates/index.js';

/**
 * Row reads without re-parsing and re-serializing unchanged rows (issue #18 item 3).
 *
 * The read queries answer each row as one text (`rowTextSql` in rows.repository.ts): the row's own
 * fields as a JSON array, a U+0001, then the stored cells' JSON. A row's presented JSON is a pure
 * function of that text and of how it is presented (the columns shown, names or keys, TIME_ZONE), so
 * it is kept under exactly that: a read finds the fragment by the row's text, and any change of the
 * row (cells, mtime, modifier, lock, archive mark) is a different text, hence a miss (one fragment per
 * row id and presentation: the new one replaces the old). Nothing needs invalidating and nothing can be
 * stale; memory is bounded by least-recently-used eviction.
 *
 * Link cells are not part of the row's text (they live in `base_links` and show other rows' cells), so
 * a fragment is split at its link columns and their JSON, read per page, is spliced in between.
 */

/** The separator between a row text's fields and its cells (escaped in JSON, so never inside either). */
const CELLS = '\u0001';

/** A row text (see above) as the StoredRow it encodes. */
export function parseRowText(text: string): StoredRow {
  const cut = text.indexOf(CELLS);
  const [id, ctime, mtime, creator, modifier] = JSON.parse(text.slice(0, cut)) as [unknown, unknown, unknown, unknown, unknown];
  return {
    _id: String(id),
    _ctime: Number(ctime),
    _mtime: Number(mtime),
    _creator: String(creator ?? ''),
    _last_modifier: String(modifier ?? ''),
    data: (JSON.parse(text.slice(cut + 1)) ?? {}) as Record<string, unknown>,
  };
}

/** A row presented once: its JSON, cut at each link column (whose cell is spliced in per read). */
export interface RowFragment {
  /** The row text it was presented from: a fragment serves only a read of exactly this text. */
  text: string;
  rowId: string;
  /** `segments.length` = link columns + 1. */
  segments: string[];
  /** Archived rows are left out of the whole-base read (listings leave them out in SQL). */
  archived: boolean;
  bytes: number;
}

/** How rows are presented: one per (columns shown, names or keys, TIME_ZONE generation); see `presenterFor`. */
export interface RowPresenter {
  readonly signature: string;
  /** The link columns' keys in the order their cells are spliced in. */
  readonly linkKeys: string[];
  present(row: StoredRow): string[];
}

const ROW_FIELDS = ['_id', '_ctime', '_mtime', '_creator', '_last_modifier', '_archived', '_locked', '_locked_by'] as const;

/**
 * The listing presentation of `presentRow` (present.ts), as JSON text cut at link columns. The key
 * order is worked out once with a template object, so it is exactly the object's (integer-like names
 * first, a later column of the same name overwriting an earlier one in place).
 */
class ListingPresenter implements RowPresenter {
  private readonly order: Array<{ keyJson: string; source: number }>;
  readonly linkKeys: string[];

  constructor(
    readonly signature: string,
    private readonly columns: ColumnMeta[],
    byName: boolean,
  ) {
    const sources: Record<string, number> = {};
    ROW_FIELDS.forEach((field, i) => (sources[field] = -1 - i));
    columns.forEach((column, i) => (sources[byName ? column.name : column.key] = i));
    this.order = Object.keys(sources).map((key) => ({ keyJson: JSON.stringify(key), source: sources[key]! }));
    this.linkKeys = this.order.filter((o) => o.source >= 0 && columns[o.source]!.type === 'link').map((o) => columns[o.source]!.key);
  }

  present(row: StoredRow): string[] {
    const segments: string[] = [];
    const locks = lockFields(row);
    // Pieces joined once per segment: a flat string. Built with `+=` a segment is a tree of concatenations
    // that the cache would keep (about three times the text's length; see RowFragments' byte bound).
    let text: string[] = ['{'];
    let first = true;
    for (const { keyJson, source } of this.order) {
      let value: unknown;
      if (source < 0) {
        switch (ROW_FIELDS[-1 - source]) {
          case '_id': value = row._id; break;
          case '_ctime': value = isoMillis(row._ctime); break;
          case '_mtime': value = isoMillis(row._mtime); break;
          case '_creator': value = row._creator; break;
          case '_last_modifier': value = row._last_modifier; break;
          case '_archived': value = row.data._archived === true; break;
          case '_locked': value = locks._locked; break;
          case '_locked_by': value = locks._locked_by; break;
        }
      } else {
        const column = this.columns[source]!;
        if (column.type === 'link') {
          text.push(first ? '' : ',', keyJson, ':');
          segments.push(text.join(''));
          text = [];
          first = false;
          continue;
        }
        value = presentedValue(column, cellValue(column, row));
      }
      const json = JSON.stringify(value);
      if (json === undefined) continue; // as JSON.stringify leaves such a key out of an object
      text.push(first ? '' : ',', keyJson, ':', json);
      first = false;
    }
    text.push('}');
    segments.push(text.join(''));
    return segments;
  }
}

/** The whole-base read's presentation (`presentRowByKeys`): no link cells. */
class ByKeysPresenter implements RowPresenter {
  readonly linkKeys: string[] = [];
  constructor(
    readonly signature: string,
    private readonly dateKeys: string[],
  ) {}

  present(row: StoredRow): string[] {
    return [JSON.stringify(presentRowByKeys(row, this.dateKeys))];
  }
}

const presenters = new Map<string, RowPresenter>();

function remember(presenter: RowPresenter): RowPresenter {
  if (presenters.size >= 256) presenters.clear();
  presenters.set(presenter.signature, presenter);
  return presenter;
}

/** The listing presenter of these columns: everything of a column that `presentRow` reads is in the signature. */
export function listingPresenter(columns: ColumnMeta[], byName: boolean): RowPresenter {
  let signature = `l${byName ? 'n' : 'k'}${zoneGeneration()}`;
  for (const c of columns) signature += `\u0000${c.key}\u0001${byName ? c.name : ''}\u0001${c.type}\u0001${isDateColumn(c.type, c.data) ? 1 : 0}`;
  return presenters.get(signature) ?? remember(new ListingPresenter(signature, columns, byName));
}

/** The whole-base presenter for a table whose date cells are under `dateKeys`. */
export function byKeysPresenter(dateKeys: string[]): RowPresenter {
  const signature = `k${zoneGeneration()}\u0000${dateKeys.join('\u0000')}`;
  return presenters.get(signature) ?? remember(new ByKeysPresenter(signature, dateKeys));
}

export interface FragmentOptions {
  /** All bases' fragments together. */
  maxBytes: number;
  /** One base's fragments (all its presentations). */
  maxBytesPerBase: number;
}

export const DEFAULT_FRAGMENT_OPTIONS: FragmentOptions = { maxBytes: 32 * 1024 * 1024, maxBytesPerBase: 16 * 1024 * 1024 };

interface BaseFragments {
  bytes: number;
  /** Per presenter signature, per row id (as the row text starts with it); least recently used first. */
  groups: Map<string, Map<string, RowFragment>>;
}

/**
 * A row is kept only when read a second time (or when its kept fragment is replaced by a newer text): a
 * read of a whole big table, page after page, keeps nothing, so its presented rows die young instead of
 * living in the cache long enough to reach V8's old generation and wait there for a full collection (the
 * memory peaks of issue 34). The rows read once are remembered (base and row id, whatever the
 * presentation) in all, the latest this many and the generation before them (about 3 MB at most): a scan
 * of a table of more rows than that keeps nothing.
 */
const SEEN_IDS = 16_384;

/** Ids read once: the latest up to `SEEN_IDS`, and the generation before them (dropped whole when the latest fills). */
class SeenOnce {
  private latest = new Set<string>();
  private older = new Set<string>();

  /** True when `key` was read once before (and forgets it); else remembers it. */
  again(key: string): boolean {
    if (this.latest.delete(key) || this.older.delete(key)) return true;
    if (this.latest.size >= SEEN_IDS) {
      this.older = this.latest;
      this.latest = new Set();
    }
    this.latest.add(key);
    return false;
  }
}

/**
 * Bytes of a kept fragment beyond its strings' characters: the fragment object, its segments array, the
 * map entry and its key, the strings' headers. Measured (row-fragments.test.ts, "keeps within its byte
 * bound"): about 500 bytes a row of four cells.
 */
const ENTRY_OVERHEAD = 512;

/** Bytes of a string's characters as V8 keeps it: one a character, two if any is beyond Latin-1. */
function stringBytes(text: string): number {
  return WIDE.test(text) ? 2 * text.length : text.length;
}
const WIDE = /[^\u0000-\u00ff]/;

/**
 * Presented rows per base, under their row text (see the module comment), least recently used out
 * first: within a base above `maxBytesPerBase`, across bases (whole bases) above `maxBytes`.
 */
export class RowFragments {
  private readonly bases = new Map<number, BaseFragments>();
  /** Rows read once and not kept (see `SEEN_IDS`). */
  private readonly seen = new SeenOnce();
  private bytes = 0;
  private readonly options: FragmentOptions;

  constructor(options: Partial<FragmentOptions> = {}) {
    this.options = { ...DEFAULT_FRAGMENT_OPTIONS, ...options };
  }

  /** The fragments of `texts` (in order), presenting and keeping the rows not seen before. */
  fragments(baseId: number, presenter: RowPresenter, texts: string[]): RowFragment[] {
    if (texts.length === 0) return [];
    let base = this.bases.get(baseId);
    if (base) this.bases.delete(baseId);
    else base = { bytes: 0, groups: new Map() };
    this.bases.set(baseId, base);
    let group = base.groups.get(presenter.signature);
    if (group) base.groups.delete(presenter.signature);
    else group = new Map();
    base.groups.set(presenter.signature, group);

    const out: RowFragment[] = new Array(texts.length);
    let added = 0;
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i]!;
      // The row id as the text starts with it (`["<id>",`): a short key that is cheap to hash; the
      // whole text must still be equal, so an odd id (escaped in JSON) can only cost a miss.
      const id = text.slice(2, text.indexOf('"', 2));
      const kept = group.get(id);
      let fragment = kept;
      if (kept) group.delete(id);
      if (fragment?.text !== text) {
        const row = parseRowText(text);
        const segments = presenter.present(row);
        let bytes = ENTRY_OVERHEAD + stringBytes(text);
        for (const s of segments) bytes += stringBytes(s);
        fragment = { text, rowId: row._id, segments, archived: row.data._archived === true, bytes };
        // Kept on a second read, or at once when it replaces a kept one (a row read again after a write).
        if (kept) added -= kept.bytes;
        else if (!this.seen.again(`${baseId}:${id}`)) {
          out[i] = fragment;
          continue;
        }
        added += fragment.bytes;
      }
      group.set(id, fragment);
      out[i] = fragment;
    }
    base.bytes += added;
    this.bytes += added;
    if (added !== 0) this.bound(baseId, base);
    return out;
  }

  private bound(baseId: number, base: BaseFragments): void {
    // Within the base: oldest presentations' least recently used rows first.
    for (const [signature, group] of base.groups) {
      if (base.bytes <= this.options.maxBytesPerBase) break;
      for (const [id, fragment] of group) {
        if (base.bytes <= this.options.maxBytesPerBase) break;
        group.delete(id);
        base.bytes -= fragment.bytes;
        this.bytes -= fragment.bytes;
      }
      if (group.size === 0) base.groups.delete(signature);
    }
    // Across bases: least recently read bases first (the one just read last).
    for (const [id, other] of this.bases) {
      if (this.bytes <= this.options.maxBytes) break;
      if (id === baseId) continue;
      this.bases.delete(id);
      this.bytes -= other.bytes;
    }
    if (this.bytes > this.options.maxBytes) this.forget(baseId);
  }

  /** Drop a base's fragments (it was deleted). */
  forget(baseId: number): void {
    const base = this.bases.get(baseId);
    if (!base) return;
    this.bases.delete(baseId);
    this.bytes -= base.bytes;
  }

  /** Kept fragments and their rough total size (tests, metrics). */
  get stats(): { bases: number; baseIds: number[]; fragments: number; bytes: number } {
    let fragments = 0;
    for (const base of this.bases.values()) for (const group of base.groups.values()) fragments += group.size;
    return { bases: this.bases.size, baseIds: [...this.bases.keys()].sort((x, y) => x - y), fragments, bytes: this.bytes };
  }
}

/** A row's JSON: its fragment with the link cells (JSON, in `presenter.linkKeys` order) spliced in. */
export function rowJson(fragment: RowFragment, links: Array<Map<string, string>>): string {
  const { segments } = fragment;
  if (segments.length === 1) return segments[0]!;
  let text = segments[0]!;
  for (let i = 1; i < segments.length; i++) text += (links[i - 1]?.get(fragment.rowId) ?? '[]') + segments[i]!;
  return text;
}
