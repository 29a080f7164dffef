import { sql, type CompiledQuery } from 'kysely';
import { outsideCommitScope, type AppendixTx, type CommitAppendix, type Db, type Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { fieldsDigest, rowHash, type EntryFields } from './chain.js';
import { redact, redactedJson } from './redact.js';
import { AuditAppender } from './appender.js';
import { AuditSealer, PENDING_MISSING } from './sealer.js';
import { snapshotOf, type SnapshotTable } from './snapshots.js';

/** One security-relevant action. `before`/`after` are redacted before they are stored. */
export interface AuditEntry {
  action: string;
  actor: string;
  ip: string;
  target: string;
  before?: unknown;
  after?: unknown;
  baseId?: number | null;
}

/** The signature modules below `audit` receive from the container (they cannot import it). */
export type AuditRecord = (entry: AuditEntry, trx?: Executor) => Promise<void>;

export interface AuditFilter {
  actor?: string;
  action?: string;
  /** Actions starting with this (e.g. `login.`). */
  actionPrefix?: string;
  baseId?: number;
  from?: number;
  to?: number;
}

export interface VerifyResult {
  ok: boolean;
  /** Sealed rows verified. */
  rows: number;
  /** Rows appended but not yet sealed into the chain (their digests were checked). */
  pending: number;
  /** The first row that breaks the chain, and why (`seq` null: a row not yet sealed). */
  broken?: { seq: number | null; id: number | null; reason: string };
}

/** Reads inside the audited action's transaction, to build its row at commit (see `appendix`). */
export type AuditTxReader = AppendixTx;

/** What `build` reads through when the row goes into a one-statement write: nothing (it then needs a transaction). */
const NO_READS: AuditTxReader = {
  run: () => Promise.reject(new Error('audit appendix: reads need a transaction')),
  insertedId: () => {
    throw new Error('audit appendix: inserted ids need a transaction');
  },
};

const MAX_FIELD = 255;
/** Sealed writers' counts deleted per statement (`pruneWriters`). */
const WRITERS_PRUNE_BATCH = 1000;
const VERIFY_PAGE = 1000;
/** Walks of the chain `verify` repeats while seals move the head under it. */
const VERIFY_ATTEMPTS = 5;
/** (token, address) pairs already seen by this process, so a known network costs no query. */
const SEEN_LIMIT = 50_000;

export class AuditService {
  private readonly seenNetworks = new Set<string>();
  /** Each token's last address, in `seenNetworks`: the usual repeat call finds it without building the pair's key. */
  private readonly lastNetwork = new Map<number, string>();

  private readonly sealer: AuditSealer;
  private readonly appender: AuditAppender;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    /** How long appends gather before they are sealed into the chain. */
    sealDelayMs = 200,
  ) {
    this.appender = new AuditAppender(db);
    this.sealer = new AuditSealer(db, sealDelayMs);
  }

  /**
   * Appends one row: inside `trx` when the caller has a transaction (the row commits or rolls back
   * with the action), else as a change of its own. SQLite chains it at once; PostgreSQL appends it to
   * `audit_pending` (one INSERT, no lock shared with other instances) and the sealer chains it shortly after.
   */
  record: AuditRecord = async (entry, trx) => {
    const fields = this.fieldsOf(entry);
    if (trx) await this.appender.append((query) => trx.executeQuery(query), fields);
    else await this.appender.appendAlone(fields);
    this.sealSoon();
  };

  /**
   * The appendix of a commit scope (db/commit-appendix.ts): the row `build` returns is appended inside
   * the first transaction of the scope that writes, just before it commits. `build` reads through the
   * transaction (it sees the action's changes, e.g. the `after` of an update).
   */
  appendix(build: (tx: AuditTxReader) => Promise<AuditEntry>): CommitAppendix {
    return {
      write: async (tx) => {
        await this.appender.append((query) => tx.run(query), this.fieldsOf(await build(tx)));
        this.sealSoon();
      },
      // A one-statement write (PostgreSQL appends): the row as parts of it, built without reads (a
      // `build` that reads refuses, and the write goes in a transaction instead).
      addTo: async (statement) => {
        if (this.appender.chainsAtAppend) return false;
        this.appender.appendTo(statement, this.fieldsOf(await build(NO_READS)));
        this.sealSoon();
        return true;
      },
    };
  }

  private sealSoon(): void {
    if (!this.appender.chainsAtAppend) this.sealer.soon();
  }

  private fieldsOf(entry: AuditEntry): EntryFields {
    // canonicalJson({ before, after }) of the redacted values, written in one pass ("after" sorts first).
    const parts: string[] = [];
    if (entry.after !== undefined) parts.push(`"after":${redactedJson(entry.after)}`);
    if (entry.before !== undefined) parts.push(`"before":${redactedJson(entry.before)}`);
    return {
      created_at: this.clock.now(),
      action: entry.action.slice(0, 64),
      actor: entry.actor.slice(0, MAX_FIELD),
      ip: entry.ip.slice(0, 64),
      base_id: entry.baseId ?? null,
      target: String(redact(entry.target)).slice(0, 1000),
      detail: `{${parts.join(',')}}`,
    };
  }

  /** Moves every pending row into the hash chain now (also done shortly after each append, and every minute). */
  seal(): Promise<number> {
    return this.sealer.seal();
  }

  /** Seals what is pending and stops sealing (the server's stop). */
  close(): Promise<void> {
    return this.sealer.close();
  }

  /**
   * Records `api_token.new_network` the first time an API-Token is used from an address: the first
   * use of a pair in this process looks for an earlier row (indexed), later uses cost nothing.
   */
  tokenUsedFrom(tokenId: number, ip: string): Promise<void> | undefined {
    // Called on every gateway call of an API-Token: a known pair returns here, without a promise.
    if (this.lastNetwork.get(tokenId) === ip) return undefined;
    const key = `${tokenId}|${ip}`;
    const seen = this.seenNetworks.has(key);
    if (!seen && this.seenNetworks.size >= SEEN_LIMIT) {
      this.seenNetworks.clear();
      this.lastNetwork.clear();
    }
    this.seenNetworks.add(key);
    if (this.lastNetwork.size >= SEEN_LIMIT) this.lastNetwork.clear();
    this.lastNetwork.set(tokenId, ip);
    return seen ? undefined : this.newNetwork(tokenId, ip);
  }

  private async newNetwork(tokenId: number, ip: string): Promise<void> {
    const target = `api-token:${tokenId}`;
    for (const table of ['audit_log', 'audit_pending'] as const) {
      // The action as a literal: the index of these rows is partial on it (migration 0041), and a bound parameter would not match it.
      const seen = await this.db.selectFrom(table).select('id').where(sql<boolean>`action = 'api_token.new_network'`).where('target', '=', target).where('ip', '=', ip).executeTakeFirst();
      if (seen) return;
    }
    const token = await this.db.selectFrom('api_tokens').select(['base_id', 'app_name']).where('id', '=', tokenId).executeTakeFirst();
    await this.record({ action: 'api_token.new_network', actor: target, ip, target, baseId: token?.base_id ?? null, after: { app_name: token?.app_name } });
  }

  /** The sealed rows (the served logs seal first, so an action just done is listed). */
  async list(filter: AuditFilter, offset: number, limit: number) {
    await this.seal();
    const rows = await this.filtered(filter).selectAll().orderBy('seq', 'desc').offset(offset).limit(limit).execute();
    const total = Number((await this.filtered(filter).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    return { rows, total };
  }

  /** Every matching row, oldest first, in pages (the JSON-lines export). */
  async *stream(filter: AuditFilter): AsyncGenerator<Awaited<ReturnType<AuditService['list']>>['rows'][number]> {
    await this.seal();
    let after = 0;
    for (;;) {
      const page = await this.filtered(filter).selectAll().where('seq', '>', after).orderBy('seq').limit(VERIFY_PAGE).execute();
      yield* page;
      if (page.length < VERIFY_PAGE) return;
      after = page[page.length - 1]!.seq;
    }
  }

  private filtered(filter: AuditFilter) {
    let q = this.db.selectFrom('audit_log');
    if (filter.actor) q = q.where('actor', '=', filter.actor);
    if (filter.action) q = q.where('action', '=', filter.action);
    if (filter.actionPrefix) q = q.where('action', 'like', `${filter.actionPrefix}%`);
    if (filter.baseId !== undefined) q = q.where('base_id', '=', filter.baseId);
    if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from);
    if (filter.to !== undefined) q = q.where('created_at', '<=', filter.to);
    return q;
  }

  /**
   * Walks the chain from the pruning anchor to the head; the first row that does not fit breaks it
   * (so does a marker the sealer chained where pending rows had been deleted). Then checks the rows not
   * yet sealed: each against its digest, and each writer's rows for a gap. Reads only (`seal` first
   * to verify everything appended so far as chain).
   */
  async verify(): Promise<VerifyResult> {
    // The chain is walked up to the head read first and the pending rows are read after it: a seal that
    // commits in between moves rows from the second part into the first unseen (and with them a missing
    // one's marker). So the walk is repeated while the head moved meanwhile (a few times at most: on
    // SQLite every audited write moves it, and there nothing is pending to miss).
    for (let attempt = 1; ; attempt++) {
      const { result, headSeq } = await this.verifyFromHead();
      if (!result.ok || attempt >= VERIFY_ATTEMPTS) return result; // a break found stays a break
      const now = await this.db.selectFrom('audit_head').select('seq').where('id', '=', 1).executeTakeFirstOrThrow();
      if (Number(now.seq) === headSeq) return result;
    }
  }

  private async verifyFromHead(): Promise<{ result: VerifyResult; headSeq: number }> {
    const head = await this.db.selectFrom('audit_head').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const at = (result: VerifyResult) => ({ result, headSeq: Number(head.seq) });
    let prev = head.anchor_hash;
    let expected = head.anchor_seq + 1;
    let rows = 0;
    const broken = (seq: number | null, id: number | null, reason: string, pending = 0): VerifyResult => ({ ok: false, rows, pending, broken: { seq, id, reason } });
    for (;;) {
      // Up to the head read above: rows chained meanwhile are not part of what is verified.
      const page = await this.db.selectFrom('audit_log').selectAll().where('seq', '>=', expected).where('seq', '<=', head.seq).orderBy('seq').limit(VERIFY_PAGE).execute();
      for (const row of page) {
        if (row.seq !== expected) return at(broken(expected, null, `row ${expected} is missing (deleted); the chain resumes at row ${row.seq}`));
        if (row.prev_hash !== prev) return at(broken(row.seq, row.id, `row ${row.seq} does not follow row ${row.seq - 1} (prev_hash differs)`));
        if (rowHash(prev, row) !== row.hash) return at(broken(row.seq, row.id, `row ${row.seq} was edited (its hash does not match its fields)`));
        if (row.digest !== null && fieldsDigest(row) !== row.digest) return at(broken(row.seq, row.id, `row ${row.seq} was edited before it was sealed (its digest does not match its fields)`));
        if (row.action === PENDING_MISSING) return at(broken(row.seq, row.id, `rows appended before row ${row.seq} were deleted before they were sealed (${row.detail})`));
        prev = row.hash;
        expected += 1;
        rows += 1;
      }
      if (page.length < VERIFY_PAGE) break;
    }
    const last = expected - 1;
    if (head.seq !== last || head.hash !== prev) return at(broken(last + 1, null, `rows ${last + 1}…${head.seq} are missing (deleted from the end)`));
    const pending = await this.verifyPending();
    return at(pending.broken ? { ...pending, ok: false, rows } : { ok: true, rows, pending: pending.count });
  }

  /**
   * The pending rows: their digests, and per writer that its rows are exactly `sealed+1 … appended`.
   * Under the chain head's lock, so no seal moves rows meanwhile; the writers are read before the rows,
   * so a row appended in between (a count above `appended`) is not taken for a gap.
   */
  private verifyPending(): Promise<{ count: number; pending: number; broken?: VerifyResult['broken'] }> {
    return outsideCommitScope(() =>
      this.db.transaction().execute(async (trx) => {
        await trx.updateTable('audit_head').set((eb) => ({ seq: eb('seq', '+', 0) })).where('id', '=', 1).execute();
        const writers = new Map((await trx.selectFrom('audit_writers').selectAll().execute()).map((w) => [w.id, { appended: Number(w.appended), sealed: Number(w.sealed), seen: new Set<number>() }]));
        let count = 0;
        const fail = (id: number | null, reason: string) => ({ count, pending: count, broken: { seq: null, id, reason } });
        for (let after = 0; ; ) {
          const page = await trx.selectFrom('audit_pending').selectAll().where('id', '>', after).orderBy('id').limit(VERIFY_PAGE).execute();
          for (const row of page) {
            if (fieldsDigest(row) !== row.digest) return fail(row.id, `pending row ${row.id} (not yet sealed) was edited (its digest does not match its fields)`);
            if (row.writer !== null && row.writer_seq !== null) writers.get(row.writer)?.seen.add(Number(row.writer_seq));
            count += 1;
          }
          if (page.length < VERIFY_PAGE) break;
          after = page[page.length - 1]!.id;
        }
        for (const [writer, { appended, sealed, seen }] of writers) {
          for (let n = sealed + 1; n <= appended; n += 1) {
            if (!seen.has(n)) return fail(null, `pending row ${n} of writer ${writer} (appended, not yet sealed) is missing (deleted)`);
          }
        }
        return { count, pending: count };
      }),
    );
  }

  /**
   * Drops rows older than the retention; the last dropped row's sequence and hash become the anchor
   * the chain is verified from. Returns how many rows went. Also drops the counts of writers whose
   * appends are all sealed (`pruneWriters`).
   */
  async prune(now: number): Promise<number> {
    await this.pruneWriters();
    if (this.retentionDays <= 0) return 0;
    await this.seal();
    const cutoff = now - this.retentionDays * 86_400_000;
    return this.db.transaction().execute(async (trx) => {
      // Holding the head keeps appends out while the anchor moves.
      await trx.updateTable('audit_head').set((eb) => ({ seq: eb('seq', '+', 0) })).where('id', '=', 1).execute();
      const last = await trx.selectFrom('audit_log').select(['seq', 'hash']).where('created_at', '<', cutoff).orderBy('seq', 'desc').limit(1).executeTakeFirst();
      if (!last) return 0;
      const gone = await trx.deleteFrom('audit_log').where('seq', '<=', last.seq).executeTakeFirst();
      await trx.updateTable('audit_head').set({ anchor_seq: last.seq, anchor_hash: last.hash }).where('id', '=', 1).execute();
      return Number(gone.numDeletedRows);
    });
  }

  /**
   * Deletes the `audit_writers` rows (one per instance start, PostgreSQL) whose appends are all sealed,
   * `WRITERS_PRUNE_BATCH` per statement; returns how many went. Such a writer has no pending row, so
   * neither verify nor the sealer needs its count: a gap is only looked for between `sealed` and
   * `appended`. A writer still running that appends again starts a new count at 1 (its row is written
   * afresh, and the sealer counts a writer without a row from 0), so this instance's own row is kept
   * only to spare it that. A writer appending meanwhile holds its row's lock: the delete waits and
   * checks the counts again on the row as committed.
   */
  async pruneWriters(): Promise<number> {
    let total = 0;
    for (;;) {
      const gone = await outsideCommitScope(() =>
        this.db
          .deleteFrom('audit_writers')
          .where('id', 'in', (eb) =>
            eb.selectFrom('audit_writers').select('id').whereRef('appended', '=', 'sealed').where('id', '<>', this.appender.writer).limit(WRITERS_PRUNE_BATCH),
          )
          .whereRef('appended', '=', 'sealed')
          .executeTakeFirst(),
      );
      const n = Number(gone.numDeletedRows);
      total += n;
      if (n < WRITERS_PRUNE_BATCH) return total;
    }
  }

  /**
   * The audited fields of a webhook or rule now (`before` of a change, `after` of an update), read
   * through `tx` (inside the action's transaction) when given.
   */
  snapshot(table: SnapshotTable, id: number, baseId: number | null, tx?: AuditTxReader): Promise<Record<string, unknown> | undefined> {
    const run = tx ? (query: CompiledQuery) => tx.run(query) : (query: CompiledQuery) => this.db.executeQuery(query);
    return snapshotOf(this.db, run, table, id, baseId);
  }

  /** The base a request names (workspace + name, or uuid), for the per-base view. */
  async baseIdOf(ref: { workspaceId?: number; name?: string; uuid?: string }): Promise<number | null> {
    let q = this.db.selectFrom('bases').select('id');
    if (ref.uuid) q = q.where('uuid', '=', ref.uuid);
    else if (ref.workspaceId !== undefined && ref.name) q = q.where('workspace_id', '=', ref.workspaceId).where('name', '=', ref.name);
    else return null;
    return (await q.executeTakeFirst())?.id ?? null;
  }
}
