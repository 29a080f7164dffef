/**
 * Where pages of listings end (issue 34 item 2): for a listing (its table, view, filters, sorts, who
 * asks, today) at one base revision, "the row at position N has id I" (and, in a sorted listing, these
 * sort values). A page asked for at `start` then begins after the nearest known position at or before
 * it — a keyset step from there — instead of reading and skipping every row before it: reading a table
 * page by page costs the same at any depth.
 *
 * The positions are kept per revision: any committed write to the base makes them unused (the next
 * read learns new ones). Bounded: `MAX_LISTINGS` listings, `MAX_POSITIONS` positions each, a few dozen
 * bytes a position (sort values longer than `MAX_VALUES_LENGTH` as JSON are not kept).
 */

const MAX_LISTINGS = 512;
const MAX_POSITIONS = 256;
/** Longest sort values (as JSON text) a position keeps: positions stay a few hundred bytes at most. */
const MAX_VALUES_LENGTH = 256;

interface Known {
  baseId: number;
  revision: number;
  /** position (rows before) → the last row before it: its id and, in a sorted listing, its sort values */
  positions: Map<number, PageEnd>;
}

export interface PageEnd {
  afterId: number;
  values?: unknown[];
}

export class ListingPositions {
  private readonly listings = new Map<string, Known>();

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
    if (values && JSON.stringify(values).length > MAX_VALUES_LENGTH) return;
    let known = this.listings.get(key);
    if (!known || known.revision !== revision) {
      known = { baseId, revision, positions: new Map() };
    }
    // Most recently used last: the first key is the one to drop.
    this.listings.delete(key);
    this.listings.set(key, known);
    if (known.positions.size >= MAX_POSITIONS) known.positions.delete(known.positions.keys().next().value!);
    known.positions.set(position, values ? { afterId, values } : { afterId });
    if (this.listings.size > MAX_LISTINGS) this.listings.delete(this.listings.keys().next().value!);
  }

  /** Listings and positions kept (for /metrics). */
  get stats(): { listings: number; positions: number } {
    let positions = 0;
    for (const known of this.listings.values()) positions += known.positions.size;
    return { listings: this.listings.size, positions };
  }
}
