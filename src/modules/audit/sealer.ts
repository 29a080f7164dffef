import { PostgresAdapter, type CompiledQuery } from 'kysely';
import { outsideCommitScope, type Db, type Executor } from '../../db/index.js';
import type { AuditLogTable } from './audit.table.js';
import { rowHash, type EntryFields } from './chain.js';

/** Pending rows moved into the chain per transaction (11 bound values a row: far below both engines' limits). */
const SEAL_BATCH = 500;

/**
 * Moves appended rows (`audit_pending`) into the hash chain (`audit_log`), oldest append first. One
 * sealer at a time across instances: a seal starts by updating the `audit_head` row, which on
 * PostgreSQL holds its row lock until the seal commits (SQLite has one writer); a second sealer then
 * finds the rows gone from `audit_pending` and chains only what is left, after the first one's head.
 * Within this process seals never overlap, and `soon()` gathers appends of a short while into one seal.
 */
export class AuditSealer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly delayMs: number,
  ) {}

  /** A seal within `delayMs` (one timer for every append meanwhile). */
  soon(): void {
    if (this.timer || this.closed) return;
    // Outside the caller's commit scope: the seal's transaction must not carry a request's audit row.
    outsideCommitScope(() => {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.seal().catch((error: unknown) => console.error('audit seal failed (the rows stay pending and are sealed by the next seal)', error));
      }, this.delayMs);
      this.timer.unref();
    });
  }

  /** Seals every row pending now; returns how many. */
  async seal(): Promise<number> {
    // Wait for a seal under way, then run one of our own: rows appended meanwhile are included.
    while (this.running) await this.running.catch(() => 0);
    // This seal covers every append whose timer is pending (each calls soon() after its commit); appends
    // committing later start a timer of their own. (A stale timer sealed rows a caller had just read as pending.)
    clearTimeout(this.timer);
    this.timer = undefined;
    const run = outsideCommitScope(() => this.sealAll());
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }

  /** Stops the timer and seals what is pending (the server's stop). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    // A database that is away at the stop must not fail it: the rows stay pending for the next seal.
    await this.seal().catch((error: unknown) => console.error('audit seal at stop failed (the rows stay pending)', error));
  }

  private async sealAll(): Promise<number> {
    if (!(await this.db.selectFrom('audit_pending').select('id').limit(1).executeTakeFirst())) return 0;
    let total = 0;
    for (;;) {
      const sealed = await this.sealBatch();
      total += sealed;
      if (sealed < SEAL_BATCH) return total;
    }
  }

  private sealBatch(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const head = await trx
        .updateTable('audit_head')
        .set((eb) => ({ seq: eb('seq', '+', 0) }))
        .where('id', '=', 1)
        .returning(['seq', 'hash'])
        .executeTakeFirstOrThrow();
      // Taken and removed in one statement; the head lock keeps other sealers out until we commit.
      const taken = await trx
        .deleteFrom('audit_pending')
        .where('id', 'in', trx.selectFrom('audit_pending').select('id').orderBy('id').limit(SEAL_BATCH))
        .returningAll()
        .execute();
      if (taken.length === 0) return 0;
      taken.sort((a, b) => a.id - b.id);
      const writers = await this.writersOf(trx, taken);
      let { seq, hash } = head;
      const rows: ChainedRow[] = [];
      const add = (fields: EntryFields, digest: string | null) => {
        seq += 1;
        const chained = { seq, ...fields };
        const prev = hash;
        hash = rowHash(prev, chained);
        rows.push({ ...chained, digest, prev_hash: prev, hash });
      };
      for (const { id: _id, digest, writer, writer_seq, ...fields } of taken) {
        const count = writer === null ? undefined : writers.get(writer);
        if (count && writer_seq !== null) {
          // A writer's rows come in the order it counted them: a skipped count is a row deleted before sealing.
          if (writer_seq > count.sealed + 1) add(missingMarker(writer!, count.sealed + 1, writer_seq - 1, fields.created_at), null);
          count.sealed = Math.max(count.sealed, writer_seq);
        }
        add(fields, digest);
      }
      await this.insertChained(trx, rows);
      await trx.updateTable('audit_head').set({ seq, hash }).where('id', '=', 1).execute();
      for (const [writer, count] of writers) await trx.updateTable('audit_writers').set({ sealed: count.sealed }).where('id', '=', writer).execute();
      return taken.length;
    });
  }

  /** How far each writer of `taken` was sealed (a writer whose row is gone counts from 0). */
  private async writersOf(trx: Executor, taken: Array<{ writer: string | null }>): Promise<Map<string, { sealed: number }>> {
    const ids = [...new Set(taken.map((row) => row.writer).filter((writer): writer is string => writer !== null))];
    const writers = new Map(ids.map((id) => [id, { sealed: 0 }]));
    if (ids.length === 0) return writers;
    for (const row of await trx.selectFrom('audit_writers').select(['id', 'sealed']).where('id', 'in', ids).execute()) writers.get(row.id)!.sealed = Number(row.sealed);
    return writers;
  }

  private chainedTemplate: CompiledQuery | undefined;

  /**
   * PostgreSQL: one multi-row INSERT (one round trip). SQLite: one prepared INSERT run per row (no
   * round trips to save, and a statement of a fixed text stays in the prepared-statement cache).
   */
  private async insertChained(trx: Executor, rows: ChainedRow[]): Promise<void> {
    if (trx.getExecutor().adapter instanceof PostgresAdapter) {
      await trx.insertInto('audit_log').values(rows).execute();
      return;
    }
    this.chainedTemplate ??= trx.insertInto('audit_log').values(rows[0]!).compile();
    for (const row of rows) await trx.executeQuery({ ...this.chainedTemplate, parameters: CHAINED_COLUMNS.map((column) => row[column]) });
  }
}

/** The action of the row the sealer chains where a writer's pending rows were deleted before sealing (verify fails on it). */
export const PENDING_MISSING = 'audit.pending_missing';

function missingMarker(writer: string, from: number, to: number, createdAt: number): EntryFields {
  const detail = { writer, missing: [from, to] };
  return { created_at: createdAt, action: PENDING_MISSING, actor: 'basegate', ip: '', base_id: null, target: `audit-writer:${writer}`, detail: JSON.stringify(detail) };
}

/** A row as the sealer inserts it into the chain, in the order the template binds its columns. */
const CHAINED_COLUMNS = ['seq', 'created_at', 'action', 'actor', 'ip', 'base_id', 'target', 'detail', 'digest', 'prev_hash', 'hash'] as const;
type ChainedRow = Omit<AuditLogTable, 'id'>;
