import type { Executor } from '../../db/index.js';
import { CoalescedReader } from '../../shared/coalesced-reader.js';
import { notFound } from '../../shared/errors.js';
import type { BaseRef } from './base-writer.js';
import { revisionReader } from './metadata.repository.js';
import { wholeBaseBody } from './size-limits.js';

/** A whole-base read, serialized, as of one revision of the base. */
export interface BaseSnapshot {
  revision: number;
  /** The JSON body. */
  body: Buffer;
}

interface Entry extends BaseSnapshot {
  /** `externalChanges()` when the revision was last confirmed against the database. */
  confirmedAt: number | undefined;
  /** The revision channel's generation (listening) when the revision was last confirmed, else undefined. */
  listenedAt: number | undefined;
}

/** What the cache needs of db/revision-channel.ts's RevisionChannel. */
export interface RevisionChanges {
  onChange(listener: (baseId: number) => void): void;
  readonly isListening: boolean;
  readonly generation: number;
  sync(): Promise<number | undefined>;
}

export interface SnapshotOptions {
  /** Bytes of all cached bodies together; least recently used ones go first. */
  maxBytes: number;
  /** Bodies above this are served but not kept. */
  maxEntryBytes: number;
  /** See `DbHandle.externalChanges`; without it every read confirms the revision with a query. */
  externalChanges?: () => number;
  /**
   * `externalChanges` is asked at most this often (ms); within that time another process's commit may
   * go unseen. It costs a few µs under load, a good part of a cached read.
   */
  externalChangesEveryMs: number;
  /** A monotonic clock in ms (tests drive it). */
  monotonicNow: () => number;
  /**
   * PostgreSQL: revision changes heard over LISTEN/NOTIFY; while it listens, a read of a cached body
   * costs one shared round trip on the listening connection instead of a revision query.
   */
  revisionChanges?: RevisionChanges;
}

export const DEFAULT_SNAPSHOT_OPTIONS: SnapshotOptions = {
  maxBytes: 64 * 1024 * 1024,
  maxEntryBytes: 8 * 1024 * 1024,
  externalChangesEveryMs: 1,
  monotonicNow: () => performance.now(),
};

/** Listing pages of one base kept under its revision (the whole group goes when the revision moves). */
interface PageGroup {
  revision: number;
  confirmedAt: number | undefined;
  bodies: Map<string, Buffer>;
  bytes: number;
}

/** Listing pages kept per base (oldest first out); all pages together keep within a quarter of `maxBytes`, beside the whole-base bodies. */
const PAGES_PER_BASE = 64;

/** Builds consistent again after a write lands mid-build, at most this many times. */
const BUILD_ATTEMPTS = 3;

/**
 * Eviction counters, one per slot of base ids: a build is kept only if its base's slot did not move
 * while it ran. Slots bound the memory; two bases sharing one only cost an occasional rebuild.
 */
const EPOCH_SLOTS = 4096;

/**
 * The whole base (`GET /dtables/{uuid}/`) as serialized JSON, cached per base under the base's
 * revision, which every write bumps in its own transaction (BaseWriter).
 *
 * Freshness: this instance's writes evict the base's entry as they commit (`evict`), so they are
 * seen by the very next read. Other writers are caught by confirming the revision with a
 * single-row query sent after the read arrived (concurrent reads of a base share one, see
 * CoalescedReader): exact on PostgreSQL. On PostgreSQL with `revisionChanges` listening, that query is
 * replaced by `sync()` (one empty query on the listening connection, shared by all reads arriving
 * meanwhile, after which every notification of a write committed before the read arrived has evicted
 * its base): a body confirmed while the channel listened in the same generation and not evicted since
 * is current. When the channel is down, reconnecting or stalled, reads confirm with the query. On SQLite, where basegate runs as one process, that query
 * is skipped while `externalChanges` (asked at most once a millisecond) says no other connection has
 * committed since the entry was last confirmed, so a stray second process's write shows within 1 ms.
 *
 * A build reads the metadata and the rows in several statements. It is kept only if the revision
 * is the same after it as before and no write of this instance to the base committed meanwhile, so a
 * cached body is never torn or stale; a build that raced a write is done again (a few times at most;
 * then it is served, as an uncached read always was, but not kept).
 */
export class BaseSnapshots {
  private readonly entries = new Map<number, Entry>();
  private bytes = 0;
  private readonly epochs = new Uint32Array(EPOCH_SLOTS);
  private readonly readRevision: (baseId: number) => Promise<number | undefined>;
  private readonly options: SnapshotOptions;

  constructor(
    db: Executor,
    private readonly build: (base: BaseRef) => Promise<unknown>,
    options: Partial<SnapshotOptions> = {},
  ) {
    // Concurrent reads of one base share revision queries (each still answered by one sent after it arrived).
    const revisions = new CoalescedReader(revisionReader(db));
    this.readRevision = (baseId) => revisions.get(baseId);
    this.options = { ...DEFAULT_SNAPSHOT_OPTIONS, ...options };
  }

  /** The cached body when it is known current without asking the database (SQLite, nobody else wrote); else undefined. */
  cached(base: BaseRef): BaseSnapshot | undefined {
    const hit = this.entries.get(base.id);
    if (!hit) return undefined;
    const changes = this.externalChanges();
    return changes !== undefined && hit.confirmedAt === changes ? this.touch(base.id, hit) : undefined;
  }

  private probedAt = -Infinity;
  private probed: number | undefined;

  private externalChanges(): number | undefined {
    const { externalChanges, externalChangesEveryMs, monotonicNow } = this.options;
    if (!externalChanges) return undefined;
    const now = monotonicNow();
    if (now - this.probedAt >= externalChangesEveryMs) {
      this.probed = externalChanges();
      this.probedAt = now;
    }
    return this.probed;
  }

  async get(base: BaseRef): Promise<BaseSnapshot> {
    const known = this.cached(base);
    if (known) return known;
    const channel = this.options.revisionChanges;
    if (channel) {
      this.listen(channel);
      const heard = await this.heardCurrent(base.id, channel);
      if (heard) return this.touch(base.id, heard);
    }
    const slot = base.id % EPOCH_SLOTS;
    let epoch = this.epochs[slot]!;
    const changes = this.externalChanges();
    // Taken before the revision query is sent: the channel must already listen when that query's snapshot is taken.
    const listenedAt = channel?.isListening ? channel.generation : undefined;
    const hit = this.entries.get(base.id);
    let revision = await this.revisionOf(base);
    if (hit && hit.revision === revision && this.entries.get(base.id) === hit) {
      hit.confirmedAt = changes;
      hit.listenedAt = listenedAt;
      return this.touch(base.id, hit);
    }
    for (let attempt = 1; ; attempt++) {
      const built = await this.build(base);
      const body = wholeBaseBody(() => built);
      const epochBeforeAfter = this.epochs[slot]!;
      const after = await this.revisionOf(base);
      const entry: Entry = { revision, body, confirmedAt: changes, listenedAt };
      if (after === revision && epoch === this.epochs[slot]) {
        this.keep(base.id, entry);
        return entry;
      }
      if (attempt === BUILD_ATTEMPTS) return entry;
      revision = after;
      epoch = epochBeforeAfter;
    }
  }

  private listening = false;

  private listen(channel: RevisionChanges): void {
    if (this.listening) return;
    this.listening = true;
    // Another instance's write (or this one's: evicting twice is harmless) committed.
    channel.onChange((baseId) => this.evict(baseId));
  }

  /** The cached entry when the revision channel vouches for it (see the class comment), else undefined. */
  private async heardCurrent(baseId: number, channel: RevisionChanges): Promise<Entry | undefined> {
    const hit = this.entries.get(baseId);
    if (!hit || hit.listenedAt === undefined || hit.listenedAt !== channel.generation || !channel.isListening) return undefined;
    const generation = await channel.sync();
    return generation === hit.listenedAt && this.entries.get(baseId) === hit ? hit : undefined;
  }

  /** A write to the base committed here: forget its body at once. */
  evict(baseId: number): void {
    this.epochs[baseId % EPOCH_SLOTS]! += 1;
    this.drop(baseId);
  }

  private readonly pages = new Map<number, PageGroup>();
  private pageBytes = 0;

  /**
   * A listing page (`rows/`, `filtered-rows/`) under `key` (everything its answer depends on besides
   * the base's content), cached beside the whole-base body: the same revision, confirmed the same way,
   * dropped by the same evictions, kept only when no write raced its build. `build` answers the page's JSON text.
   */
  async page(base: BaseRef, key: string, build: (revision: number) => Promise<string>): Promise<Buffer> {
    const changes = this.externalChanges();
    const group = this.pages.get(base.id);
    if (group && changes !== undefined && group.confirmedAt === changes) {
      const known = group.bodies.get(key);
      if (known) return known;
    }
    const slot = base.id % EPOCH_SLOTS;
    const epoch = this.epochs[slot]!;
    const revision = await this.revisionOf(base);
    const current = this.pages.get(base.id);
    if (current && current.revision === revision) {
      current.confirmedAt = changes;
      const known = current.bodies.get(key);
      if (known) return known;
    }
    const body = Buffer.from(await build(revision));
    // Kept only if nothing was written meanwhile (as for the whole-base body); otherwise served, not kept.
    if ((await this.revisionOf(base)) === revision && epoch === this.epochs[slot]) this.keepPage(base.id, revision, changes, key, body);
    return body;
  }

  private keepPage(baseId: number, revision: number, confirmedAt: number | undefined, key: string, body: Buffer): void {
    if (body.length > this.options.maxEntryBytes) return;
    let group = this.pages.get(baseId);
    if (!group || group.revision !== revision) {
      this.dropPages(baseId);
      group = { revision, confirmedAt, bodies: new Map(), bytes: 0 };
      this.pages.set(baseId, group);
    }
    if (group.bodies.size >= PAGES_PER_BASE) {
      const [oldest, old] = group.bodies.entries().next().value as [string, Buffer];
      group.bodies.delete(oldest);
      group.bytes -= old.length;
      this.pageBytes -= old.length;
    }
    group.bodies.set(key, body);
    group.bytes += body.length;
    this.pageBytes += body.length;
    for (const id of this.pages.keys()) {
      if (this.pageBytes <= this.options.maxBytes / 4) break;
      this.dropPages(id);
    }
  }

  private dropPages(baseId: number): void {
    const group = this.pages.get(baseId);
    if (!group) return;
    this.pages.delete(baseId);
    this.pageBytes -= group.bytes;
  }

  /** Cached bodies and their total size (for tests and metrics). */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** Cached listing pages and their total size. */
  get pageStats(): { pages: number; bytes: number } {
    let pages = 0;
    for (const group of this.pages.values()) pages += group.bodies.size;
    return { pages, bytes: this.pageBytes };
  }

  private touch(baseId: number, entry: Entry): Entry {
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(baseId);
    this.entries.set(baseId, entry);
    return entry;
  }

  private async revisionOf(base: BaseRef): Promise<number> {
    const revision = await this.readRevision(base.id);
    if (revision === undefined) {
      this.drop(base.id);
      throw notFound('dtable not found.');
    }
    return revision;
  }

  private keep(baseId: number, entry: Entry): void {
    this.drop(baseId);
    if (entry.body.length > this.options.maxEntryBytes) return;
    this.entries.set(baseId, entry);
    this.bytes += entry.body.length;
    for (const [id, old] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= old.body.length;
    }
  }

  private drop(baseId: number): void {
    this.dropPages(baseId);
    const old = this.entries.get(baseId);
    if (!old) return;
    this.entries.delete(baseId);
    this.bytes -= old.body.length;
  }
}
