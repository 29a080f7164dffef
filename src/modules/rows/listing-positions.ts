/**
 * Where pages of listings end (issue 34 item 2): for a listing (its table, view, filters, sorts, who
 * asks, today) at one base revision, "the row at position N has id I" (and, in a sorted listing, these
 * sort values). A page asked for at `start` then begins after the nearest known position at or before
 * it — a keyset step from there — instead of reading and skipping every row before it: reading a table
 * page by page costs the same at any depth.
 *
 * The positions are kept per revision: any committed write to the base makes them unused (the next
 * read learns new ones). Bounded in bytes (`maxBytes` over all listings, least recently used listing
 * out first; an estimate of what the keys, maps and values take), and `MAX_POSITIONS` positions a listing
 * (sort values longer than `MAX_VALUES_LENGTH` as JSON are not kept).
 */

const MAX_POSITIONS = 256;
/** Longest sort values (as JSON text) a position keeps: positions stay a few hundred bytes at most. */
const MAX_VALUES_LENGTH = 256;
/** Estimated bytes of a listing's entry besides its key, and of a position besides its values' text. */
const LISTING_OVERHEAD = 200;
const POSITION_OVERHEAD = 80;
export const DEFAULT_POSITIONS_BYTES = 4 * 1024 * 1024;

interface Known {
  baseId: number;
  revision: number;
  /** position (rows before) → the last row before it: its id and, in a sorted listing, its sort values */
  positions: Map<number, PageEnd>;
  /** Estimated bytes of this entry, its key included. */
  bytes: number;
}

export interface PageEnd {
  afterId: number;
  values?: unknown[];
}

export class ListingPositions {
  private readonly listings = new Map<string, Known>();
  private bytes = 0;

  constructor(private readonly maxBytes: number = DEFAULT_POSITIONS_BYTES) {}

  /** The nearest known position at or before `start`: `{ position, afterId }`, or position 0 after id 0. */
  nearest(key: string, baseId: number, revision: number, start: number): PageEnd & { position: number } {
    const known = this.listings.get(key);
    if (!known || known.revision !== revision || known.baseId !== baseId) return { position: 0, afterId: 0 };
    let best: PageEnd & { position: number } = { position: 0, afterId: 0 };
    for (const [position, end] of known.positions) {
      if (position <= start && position > best.position) best = { position, ...end };
    }
    return best;
  }

  /** Remembers that `position` rows of the listing end with the row of id `afterId`. */
  learn(key: string, baseId: number, revision: number, position: number, afterId: number, values?: unknown[]): void {
    // Long sort values (a long text) are not kept: a page after such a row starts from an earlier known end.
    const valuesText = values ? JSON.stringify(values) : '';
    if (valuesText.length > MAX_VALUES_LENGTH) return;
    let known = this.listings.get(key);
    if (known) this.forget(key, known);
    if (!known || known.revision !== revision) known = { baseId, revision, positions: new Map(), bytes: LISTING_OVERHEAD + 2 * key.length };
    // Most recently used last: the first key is the one to drop.
    this.listings.set(key, known);
    this.bytes += known.bytes;
    const cost = (end: PageEnd) => POSITION_OVERHEAD + (end.values ? 2 * JSON.stringify(end.values).length : 0);
    if (known.positions.size >= MAX_POSITIONS) {
      const [oldest, end] = known.positions.entries().next().value!;
      known.positions.delete(oldest);
      known.bytes -= cost(end);
      this.bytes -= cost(end);
    }
    const previous = known.positions.get(position);
    if (previous) {
      known.bytes -= cost(previous);
      this.bytes -= cost(previous);
    }
    const end: PageEnd = values ? { afterId, values } : { afterId };
    known.positions.set(position, end);
    known.bytes += cost(end);
    this.bytes += cost(end);
    for (const [oldKey, old] of this.listings) {
      if (this.bytes <= this.maxBytes || oldKey === key) break;
      this.forget(oldKey, old);
    }
  }

  private forget(key: string, known: Known): void {
    this.listings.delete(key);
    this.bytes -= known.bytes;
  }

  /** Forgets every position (benches: a jump with nothing known before it). */
  clear(): void {
    this.listings.clear();
    this.bytes = 0;
  }

  /** Listings, positions and estimated bytes kept (for /metrics). */
  get stats(): { listings: number; positions: number; bytes: number } {
    let positions = 0;
    for (const known of this.listings.values()) positions += known.positions.size;
    return { listings: this.listings.size, positions, bytes: this.bytes };
  }
}
