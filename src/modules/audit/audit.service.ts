import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { canonicalJson, rowHash } from './chain.js';
import { redact } from './redact.js';
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
  rows: number;
  /** The first row that breaks the chain, and why. */
  broken?: { seq: number; id: number | null; reason: string };
}

const MAX_FIELD = 255;
const VERIFY_PAGE = 1000;
/** (token, address) pairs already seen by this process, so a known network costs no query. */
const SEEN_LIMIT = 50_000;

export class AuditService {
  private readonly seenNetworks = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly retentionDays: number,
  ) {}

  /**
   * Appends one row to the chain: inside `trx` when the caller has a transaction (the row commits or
   * rolls back with the action), else in a transaction of its own. The head row's update serializes
   * appends (a row lock on PostgreSQL across instances; SQLite has one writer).
   */
  record: AuditRecord = async (entry, trx) => {
    if (trx) return this.append(trx, entry);
    await this.db.transaction().execute((own) => this.append(own, entry));
  };

  private async append(trx: Executor, entry: AuditEntry): Promise<void> {
    const detail: Record<string, unknown> = {};
    if (entry.before !== undefined) detail.before = redact(entry.before);
    if (entry.after !== undefined) detail.after = redact(entry.after);
    const head = await trx
      .updateTable('audit_head')
      .set((eb) => ({ seq: eb('seq', '+', 1) }))
      .where('id', '=', 1)
      .returning(['seq', 'hash'])
      .executeTakeFirstOrThrow();
    const fields = {
      seq: head.seq,
      created_at: this.clock.now(),
      action: entry.action.slice(0, 64),
      actor: entry.actor.slice(0, MAX_FIELD),
      ip: entry.ip.slice(0, 64),
      base_id: entry.baseId ?? null,
      target: String(redact(entry.target)).slice(0, 1000),
      detail: canonicalJson(detail),
    };
    const hash = rowHash(head.hash, fields);
    await trx.insertInto('audit_log').values({ ...fields, prev_hash: head.hash, hash }).execute();
    await trx.updateTable('audit_head').set({ hash }).where('id', '=', 1).execute();
  }

  /**
   * Records `api_token.new_network` the first time an API-Token is used from an address: the first
   * use of a pair in this process looks for an earlier row (indexed), later uses cost nothing.
   */
  async tokenUsedFrom(tokenId: number, ip: string): Promise<void> {
    const key = `${tokenId}|${ip}`;
    if (this.seenNetworks.has(key)) return;
    if (this.seenNetworks.size >= SEEN_LIMIT) this.seenNetworks.clear();
    this.seenNetworks.add(key);
    const target = `api-token:${tokenId}`;
    const seen = await this.db
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'api_token.new_network')
      .where('target', '=', target)
      .where('ip', '=', ip)
      .executeTakeFirst();
    if (seen) return;
    const token = await this.db.selectFrom('api_tokens').select(['base_id', 'app_name']).where('id', '=', tokenId).executeTakeFirst();
    await this.record({ action: 'api_token.new_network', actor: target, ip, target, baseId: token?.base_id ?? null, after: { app_name: token?.app_name } });
  }

  async list(filter: AuditFilter, offset: number, limit: number) {
    const rows = await this.filtered(filter).selectAll().orderBy('seq', 'desc').offset(offset).limit(limit).execute();
    const total = Number((await this.filtered(filter).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    return { rows, total };
  }

  /** Every matching row, oldest first, in pages (the JSON-lines export). */
  async *stream(filter: AuditFilter): AsyncGenerator<Awaited<ReturnType<AuditService['list']>>['rows'][number]> {
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

  /** Walks the chain from the pruning anchor to the head; the first row that does not fit breaks it. */
  async verify(): Promise<VerifyResult> {
    const head = await this.db.selectFrom('audit_head').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    let prev = head.anchor_hash;
    let expected = head.anchor_seq + 1;
    let rows = 0;
    for (;;) {
      const page = await this.db.selectFrom('audit_log').selectAll().where('seq', '>=', expected).orderBy('seq').limit(VERIFY_PAGE).execute();
      for (const row of page) {
        if (row.seq !== expected) return { ok: false, rows, broken: { seq: expected, id: null, reason: `row ${expected} is missing (deleted); the chain resumes at row ${row.seq}` } };
        if (row.prev_hash !== prev) return { ok: false, rows, broken: { seq: row.seq, id: row.id, reason: `row ${row.seq} does not follow row ${row.seq - 1} (prev_hash differs)` } };
        if (rowHash(prev, row) !== row.hash) return { ok: false, rows, broken: { seq: row.seq, id: row.id, reason: `row ${row.seq} was edited (its hash does not match its fields)` } };
        prev = row.hash;
        expected += 1;
        rows += 1;
      }
      if (page.length < VERIFY_PAGE) break;
    }
    const last = expected - 1;
    if (head.seq !== last || head.hash !== prev) {
      return { ok: false, rows, broken: { seq: last + 1, id: null, reason: `rows ${last + 1}…${head.seq} are missing (deleted from the end)` } };
    }
    return { ok: true, rows };
  }

  /**
   * Drops rows older than the retention; the last dropped row's sequence and hash become the anchor
   * the chain is verified from. Returns how many rows went.
   */
  async prune(now: number): Promise<number> {
    if (this.retentionDays <= 0) return 0;
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

  /** The audited fields of a webhook or rule now (`before` of a change, `after` of an update). */
  snapshot(table: SnapshotTable, id: number, baseId: number | null): Promise<Record<string, unknown> | undefined> {
    return snapshotOf(this.db, table, id, baseId);
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
