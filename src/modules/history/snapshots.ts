import { randomBytes } from 'node:crypto';
import { rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { apiError, badRequest, notFound } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import type { BaseListing } from '../access/index.js';
import * as repo from './snapshots.repository.js';
import * as files from './snapshot-files.repository.js';
import { archiveWithFiles, referencedPaths } from './snapshot-files.js';
import type { FileBlobs, KeptFile } from '../assets/index.js';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** Tiered retention: every snapshot for 30 days, then the newest of each week until 6 months. */
export const KEEP_DAILY_MS = 30 * DAY_MS;
export const KEEP_WEEKLY_MS = 183 * DAY_MS;
/** The original's rule for `POST …/snapshot/`: a change since the last one, and 10 minutes between. */
const MANUAL_GAP_MS = 10 * 60_000;
/** A base changing under every try is snapshotted at the next chance instead. */
const TRIES = 4;
/** Bases per step of the daily tick, and the most one tick does. */
const TICK_BATCH = 50;
const TICK_MAX_BASES = 10_000;

/** The whole-base archive (the transfer module's export-dtable format), given by the composition root. */
export interface SnapshotArchives {
  /** Streams the base's archive (structure, rows, links; no files) into `out`. */
  export(base: BaseListing, out: Writable): Promise<void>;
  /** A new base from an archive file (in `workspaceId`, or the user's own workspace when undefined). */
  import(user: AccountUser, workspaceId: number | undefined, file: string, name: string): Promise<BaseListing>;
}

export interface SnapshotDeps {
  db: Db;
  /** Where the files the snapshots keep are stored (content-addressed, in the asset storage). */
  blobs: FileBlobs;
  clock: Clock;
  archives: SnapshotArchives;
  /** Finds a base (not in the trash) by id. */
  baseById(id: number): Promise<BaseListing | undefined>;
  tmpDir: string;
  maxBytes: number;
}

/** Collects a stream into memory up to `max` bytes (a larger base fails the snapshot, it does not exhaust memory). */
class BoundedBuffer extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.size += chunk.length;
    if (this.size > this.max) return done(apiError(507, `The base is too large for a snapshot (over ${this.max} bytes).`));
    this.chunks.push(chunk);
    done();
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const presentListed = (s: repo.SnapshotInfo) => ({ dtable_name: `${s.base_name}.dtable`, commit_id: s.commit_id, ctime: new Date(s.created_at).toISOString() });

/**
 * Snapshots of bases: the whole-base archive at one revision, taken daily for a base that changed and
 * on request, kept by a tiered policy, listed, downloaded, and restored into a new base. Taking one
 * reads in keyset pages without a lock (writers go on); it is kept only if the base's revision did
 * not move meanwhile (else taken again), so it is the base exactly as it was at that revision.
 */
export class Snapshots {
  constructor(private readonly deps: SnapshotDeps) {}

  /** Takes a snapshot of `base` unless nothing changed since the last one; the new one or undefined. */
  async take(base: BaseListing): Promise<repo.SnapshotInfo | undefined> {
    const { db, clock } = this.deps;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const revision = await repo.currentRevision(db, base.id);
      if (revision === undefined) throw notFound('dtable not found.');
      const last = await repo.lastSnapshot(db, base.id);
      if (last && last.revision >= revision) return undefined;
      const out = new BoundedBuffer(this.deps.maxBytes);
      await this.deps.archives.export(base, out);
      if ((await repo.currentRevision(db, base.id)) !== revision) continue;
      const archive = out.bytes();
      const kept = await this.keepFiles(base, last, archive);
      const snapshot = { base_id: base.id, commit_id: randomBytes(20).toString('hex'), created_at: clock.now(), revision, base_name: base.name, size: archive.length };
      const id = await db.transaction().execute(async (trx) => {
        const id = await repo.insertSnapshot(trx, { ...snapshot, archive });
        await files.insertSnapshotFiles(trx, id, kept);
        return id;
      });
      return { id, ...snapshot };
    }
    throw apiError(503, 'The base kept changing while the snapshot was taken; try again.');
  }

  /**
   * The files the archive's rows reference, each kept as a content-addressed blob (a file unchanged
   * since the last snapshot is not read again; the same bytes are stored once). Read without a lock:
   * a file replaced meanwhile is kept as it is now.
   */
  private async keepFiles(base: BaseListing, last: repo.SnapshotInfo | undefined, archive: Buffer): Promise<KeptFile[]> {
    const { db, clock, blobs } = this.deps;
    const paths = await referencedPaths(archive);
    if (paths.length === 0) return [];
    const before = new Map((last ? await files.snapshotFiles(db, last.id) : []).map((f) => [f.path, f]));
    const kept: KeptFile[] = [];
    for (const path of paths) {
      const file = await blobs.keep(base.uuid, path, before.get(path), (sha) => files.touchBlob(db, sha, clock.now()));
      if (!file) continue;
      await files.recordBlob(db, file.sha256, file.size, clock.now());
      kept.push(file);
    }
    return kept;
  }

  /** `POST …/snapshot/`: the original's preconditions (a change since the last snapshot, 10 minutes between). */
  async takeOnRequest(base: BaseListing) {
    const last = await repo.lastSnapshot(this.deps.db, base.id);
    if (last && this.deps.clock.now() - last.created_at < MANUAL_GAP_MS) throw badRequest('The last snapshot is less than 10 minutes old.');
    const taken = await this.take(base);
    if (!taken) throw badRequest('The base has not changed since the last snapshot.');
    return { status: 'created', snapshot: { dtable_uuid: base.uuid, dtable_name: `${base.name}.dtable`, commit_id: taken.commit_id, ctime: taken.created_at } };
  }

  async list(base: BaseListing, page: number, perPage: number) {
    const rows = await repo.listSnapshots(this.deps.db, base.id, perPage + 1, (page - 1) * perPage);
    return { snapshot_list: rows.slice(0, perPage).map(presentListed), page_info: { has_next_page: rows.length > perPage, current_page: page } };
  }

  async archive(base: BaseListing, commitId: string) {
    const found = await repo.findSnapshotArchive(this.deps.db, base.id, commitId);
    if (!found) throw notFound(`Snapshot ${commitId} not found.`);
    return found;
  }

  /** The snapshot as a base file (`import-dtable` takes it): structure, rows, links and the kept files, streamed. */
  async download(base: BaseListing, commitId: string): Promise<{ info: repo.SnapshotInfo; body: Readable }> {
    const found = await this.archive(base, commitId);
    const kept = await files.snapshotFiles(this.deps.db, found.id);
    const { archive, ...info } = found;
    return { info, body: archiveWithFiles(archive, kept, (sha) => this.deps.blobs.open(sha)) };
  }

  /** A new base from a snapshot: in the base's workspace for its owner, else in the caller's own. */
  async restore(user: AccountUser, base: BaseListing, isOwner: boolean, commitId: string, name: string | undefined): Promise<BaseListing> {
    const { info: found, body } = await this.download(base, commitId);
    const stamp = new Date(found.created_at).toISOString().slice(0, 16).replace('T', ' ').replace(':', '-');
    const target = name && name.trim() !== '' ? name.trim() : `${base.name} (${stamp})`;
    await mkdir(this.deps.tmpDir, { recursive: true });
    const file = path.join(this.deps.tmpDir, `snapshot-${randomBytes(8).toString('hex')}.dtable`);
    try {
      await pipeline(body, createWriteStream(file));
      return await this.deps.archives.import(user, isOwner ? base.workspace_id : undefined, file, target);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** The daily tick: a snapshot of every base changed since its last one, then the tiered retention. */
  async daily(): Promise<{ taken: number; failed: number; pruned: number }> {
    let taken = 0;
    let failed = 0;
    let after = 0;
    for (let seen = 0; seen < TICK_MAX_BASES; ) {
      const ids = await repo.changedBases(this.deps.db, after, TICK_BATCH);
      for (const id of ids) {
        const base = await this.deps.baseById(id);
        try {
          if (base && (await this.take(base))) taken++;
        } catch (error) {
          failed++;
          console.error(`snapshot of base ${id} failed`, error);
        }
      }
      seen += ids.length;
      if (ids.length < TICK_BATCH) break;
      after = ids[ids.length - 1]!;
    }
    return { taken, failed, pruned: await this.prune() };
  }

  /** Tiered retention: all for 30 days, the newest of each week until 6 months, none after. */
  async prune(): Promise<number> {
    const now = this.deps.clock.now();
    const newestOfWeek = new Map<string, { id: number; created_at: number }>();
    const doomed: number[] = [];
    for (let after = 0; ; ) {
      const page = await repo.olderSnapshots(this.deps.db, now - KEEP_DAILY_MS, after, 1000);
      for (const s of page) {
        if (s.created_at < now - KEEP_WEEKLY_MS) {
          doomed.push(s.id);
          continue;
        }
        const key = `${s.base_id}:${Math.floor(s.created_at / WEEK_MS)}`;
        const kept = newestOfWeek.get(key);
        if (!kept) newestOfWeek.set(key, s);
        else if (s.created_at > kept.created_at) {
          doomed.push(kept.id);
          newestOfWeek.set(key, s);
        } else doomed.push(s.id);
      }
      if (page.length < 1000) break;
      after = page[page.length - 1]!.id;
    }
    await repo.deleteSnapshots(this.deps.db, doomed);
    await this.collectBlobs(now);
    return doomed.length;
  }

  /** Deletes the blobs no snapshot holds any more (pruned, or gone with their base), 500 at a time. */
  async collectBlobs(now = this.deps.clock.now()): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < 100; i++) {
      // A blob taken within the last day may be about to be referenced by a snapshot being taken.
      const shas = await files.unusedBlobs(this.deps.db, now - DAY_MS, 500);
      for (const sha of shas) {
        await this.deps.blobs.delete(sha);
        await files.deleteBlobRecord(this.deps.db, sha);
      }
      deleted += shas.length;
      if (shas.length < 500) break;
    }
    return deleted;
  }
}
