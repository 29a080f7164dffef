import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { DialectName, Db, Executor } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import { conflict } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import type { Actor, BaseData, StagedHold } from '../rows/index.js';
import type { BasesService } from '../workspaces/index.js';
import { randomStageCode } from './stage-code.js';

/** Namespace of the PostgreSQL advisory locks an import's process holds on its job while it runs. */
const JOB_LOCK_NAMESPACE = 4_471_033;
const STAGE_ATTEMPTS = 20;

export type ImportKind = 'new-base' | 'new-tables' | 'append' | 'update';

/** One import in progress, as its process sees it. */
export interface ImportJob {
  id: number;
  baseId: number;
  hold: StagedHold;
  /** Records the ids of the (unpublished) tables the import fills, before it writes any row into them. */
  recordNewTables(tableIds: readonly string[]): Promise<void>;
  /** Deletes the job record (in the transaction that publishes the import). */
  close(trx: Executor): Promise<void>;
  /** Undoes the import and deletes the job record (ImportJobs.undo). */
  undo(): Promise<void>;
}

interface JobRecord {
  id: number;
  hold_id: string;
  base_id: number;
  stage: string;
  owner: string;
  actor: string;
  created_tables: string;
  created_base: number;
}

/**
 * The entries of `import_jobs.created_tables`: `{staged: id}`, a new table in no metadata whose rows the
 * import stores under its id (their rows are deleted on an undo); a plain id, a table an import of an
 * older version created at its start (removed on an undo).
 */
type CreatedTable = string | { staged: string };

/**
 * Durable records of the imports in progress (`import_jobs`), so an import whose process died (kill -9,
 * a lost machine) is undone when a server starts: its staged rows, the rows of its new tables and its
 * held events are dropped and the base it created is moved to the trash. (The tables an import creates
 * are staged, in no metadata until it publishes, so no table is left to remove, only the rows stored
 * under their ids, which `created_tables` lists.) A running import's
 * owner is known: on SQLite the server is the file's one process, so every job at start-up is an
 * orphan; on PostgreSQL the running process holds a session advisory lock on the job, released by the
 * database when its connection dies, so another instance's recovery undoes only the dead ones.
 */
export class ImportJobs {
  /** This process's id in `import_jobs.owner`. */
  readonly owner = randomUUID();

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly baseData: BaseData,
    private readonly bases: BasesService,
    private readonly access: BaseAccess,
  ) {}

  /**
   * Runs `work` as a recorded import into base `baseId`. The record is written (and, on PostgreSQL,
   * locked by this process) before `work` starts; `work` must close it in the transaction that
   * publishes or undoes the import.
   */
  async run<T>(baseId: number, kind: ImportKind, actor: Actor, createdBase: boolean, work: (job: ImportJob) => Promise<T>): Promise<T> {
    const record = await this.insert(baseId, kind, actor, createdBase);
    const job = this.handle(baseId, actor, createdBase, record);
    // A record `work` leaves behind (its undo failed too) is undone by the next start-up's recovery.
    if (this.dialect !== 'postgres') return work(job);
    // A connection of its own holds the job's lock for as long as the import runs; if the process dies
    // the connection ends and the lock with it.
    return this.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${JOB_LOCK_NAMESPACE}, ${lockKey(record.id)})`.execute(conn);
      try {
        return await work(job);
      } finally {
        await sql`select pg_advisory_unlock(${JOB_LOCK_NAMESPACE}, ${lockKey(record.id)})`.execute(conn).catch(() => undefined);
      }
    });
  }

  /**
   * Undoes every import whose process is gone (see the class comment). Returns how many were undone.
   * Each undo is idempotent: an undo interrupted in turn is finished by the next recovery.
   */
  async recover(): Promise<number> {
    const jobs = await this.db
      .selectFrom('import_jobs')
      .select(['id', 'hold_id', 'base_id', 'stage', 'owner', 'actor', 'created_tables', 'created_base'])
      .where('owner', '!=', this.owner)
      .orderBy('id')
      .execute();
    let undone = 0;
    for (const raw of jobs) {
      const job: JobRecord = { ...raw, id: Number(raw.id), base_id: Number(raw.base_id) };
      if (!(await this.orphaned(job))) continue;
      await this.undo(job);
      undone++;
    }
    return undone;
  }

  /** Undoes an import (its rows, the tables and base it created) and deletes its record, in that order. */
  async undo(job: { id: number; hold_id: string; stage: string; base_id: number; actor: string; created_tables: string; created_base: number }): Promise<void> {
    const base = await this.access.findById(job.base_id);
    const actor = JSON.parse(job.actor) as Actor;
    if (base) {
      const created = JSON.parse(job.created_tables) as CreatedTable[];
      const newTableIds = created.flatMap((t) => (typeof t === 'string' ? [] : [t.staged]));
      await this.baseData.rows.undoHold(base, actor, { id: job.hold_id, stage: job.stage, newTableIds });
      const meta = await this.baseData.writer.read(base);
      for (const tableId of created) {
        if (typeof tableId === 'string' && meta.tables.some((t) => t._id === tableId)) await this.baseData.tables.remove(base, actor, { table_id: tableId }, false);
      }
      if (job.created_base === 1) await this.bases.trash.moveToTrash(base);
    }
    await this.db.deleteFrom('import_jobs').where('id', '=', job.id).execute();
  }

  /** Whether no live process runs the job (see the class comment). */
  private async orphaned(job: JobRecord): Promise<boolean> {
    if (this.dialect !== 'postgres') return true;
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ free: boolean }>`select pg_try_advisory_xact_lock(${JOB_LOCK_NAMESPACE}, ${lockKey(job.id)}) as free`.execute(trx);
      return rows[0]?.free === true;
    });
  }

  private async insert(baseId: number, kind: ImportKind, actor: Actor, createdBase: boolean): Promise<{ id: number; hold_id: string; stage: string }> {
    for (let attempt = 0; ; attempt++) {
      const row = { hold_id: randomUUID(), base_id: baseId, stage: randomStageCode(), kind, owner: this.owner, actor: actorJson(actor), created_tables: '[]', created_base: createdBase ? 1 : 0, started_at: this.clock.now() };
      try {
        const { id } = await this.db.insertInto('import_jobs').values(row).returning('id').executeTakeFirstOrThrow();
        return { id: Number(id), hold_id: row.hold_id, stage: row.stage };
      } catch (error) {
        // Another import of the base drew the same stage code: draw again.
        if (!isUniqueViolation(error) || attempt >= STAGE_ATTEMPTS) throw error;
      }
    }
  }

  private handle(baseId: number, actor: Actor, createdBase: boolean, record: { id: number; hold_id: string; stage: string }): ImportJob {
    let created: CreatedTable[] = [];
    return {
      id: record.id,
      baseId,
      hold: { id: record.hold_id, stage: record.stage },
      recordNewTables: async (tableIds) => {
        const next = [...created, ...tableIds.map((staged) => ({ staged }))];
        await this.db.updateTable('import_jobs').set({ created_tables: JSON.stringify(next) }).where('id', '=', record.id).execute();
        created = next;
        // Another running import of the base that drew one of these ids (before either wrote a row) would
        // share its rows: both have recorded theirs now, so at least the later one sees the other's here.
        const others = await this.db.selectFrom('import_jobs').select('created_tables').where('base_id', '=', baseId).where('id', '!=', record.id).execute();
        const drawn = new Set(others.flatMap((o) => (JSON.parse(o.created_tables) as CreatedTable[]).flatMap((t) => (typeof t === 'string' ? [] : [t.staged]))));
        if (tableIds.some((id) => drawn.has(id))) throw conflict('Another import of this base is creating a table with the same id; try again.');
      },
      close: async (trx) => {
        await trx.deleteFrom('import_jobs').where('id', '=', record.id).execute();
      },
      undo: () =>
        this.undo({ id: record.id, hold_id: record.hold_id, stage: record.stage, base_id: baseId, actor: actorJson(actor), created_tables: JSON.stringify(created), created_base: createdBase ? 1 : 0 }),
    };
  }
}

function actorJson(actor: Actor): string {
  return JSON.stringify({ user: actor.user, app: actor.app, ...(actor.userId !== undefined ? { userId: actor.userId } : {}) });
}

function lockKey(jobId: number): number {
  return jobId % 2_147_483_647;
}
