import { sql } from 'kysely';
import type { Db, DialectName } from '../../db/index.js';
import { waitForOlderTransactions } from './older-transactions.js';
import { countListedBetween, tableScope, type PositionJump } from './rows.repository.js';

/**
 * Counted position blocks (issue 34; migration 0049; docs/base-data.md "Big tables"): per table and block
 * of 4,096 row ids, the number of listed rows in it, kept exact by triggers. A jump of `skip` listed rows
 * into a table's unfiltered listing sums the blocks in order (at 10,000,000 rows about 2,500 block rows)
 * and counts only the rest, inside one block, through the position index: the cost no longer grows with
 * the depth. Built for a table right after its position index (background, one short batch at a time);
 * until a table's blocks are `ready`, its jumps count through the position index as before.
 */
export const BLOCK_BITS = 12;
const BLOCK = 2 ** BLOCK_BITS;
/** A `building` definition younger than this is another instance's build under way. */
const BUILDING_MS = 15 * 60_000;

export interface PositionBlockOptions {
  /** Off: no blocks are read (tests and benches compare both paths). */
  enabled: boolean;
  /** Blocks counted per batch of a build (one short transaction each: SQLite's writer is held only that long). */
  batchBlocks: number;
}
export const DEFAULT_POSITION_BLOCK_OPTIONS: PositionBlockOptions = { enabled: true, batchBlocks: 64 };

/** Where a jump resumes: the page starts `offset` listed rows after the row id `afterId` (offset < 4,096 + the caller's own). */
export interface BlockStart {
  afterId: number;
  offset: number;
}

const key = (baseId: number, tableId: string) => `${baseId}/${tableId}`;

export class PositionBlocks {
  private ready: Set<string> | null = null;
  private loading: Promise<Set<string>> | null = null;
  private readonly queue: Array<{ baseId: number; tableId: string; jump: PositionJump }> = [];
  private readonly queued = new Set<string>();
  private running: Promise<void> | null = null;
  /** PostgreSQL: delta rows a table had after its last compaction or build, and the compactions running. */
  private readonly compacted = new Map<string, number>();
  private readonly compacting = new Map<string, Promise<void>>();
  readonly stats = { built: 0, dropped: 0, failed: 0 };
  readonly options: PositionBlockOptions;

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly now: () => number,
    options: PositionBlockOptions = DEFAULT_POSITION_BLOCK_OPTIONS,
    private readonly log?: (error: unknown, what: string) => void,
  ) {
    this.options = { ...options };
  }

  /** Whether the table's blocks are built (false until loaded: the first call starts the load). */
  has(baseId: number, tableId: string): boolean {
    if (!this.options.enabled) return false;
    if (!this.ready) {
      void this.load().catch((error) => this.log?.(error, 'position blocks'));
      return false;
    }
    return this.ready.has(key(baseId, tableId));
  }

  /** Loads which tables have their blocks now, not on first use (BaseData.warm). */
  async warm(): Promise<void> {
    if (this.options.enabled) await this.load();
  }

  /** A table with a position index (`jump`) and no blocks yet: they are built in the background. */
  note(baseId: number, tableId: string, jump: PositionJump): void {
    const k = key(baseId, tableId);
    if (this.ready?.has(k) || this.queued.has(k)) return;
    this.queued.add(k);
    this.queue.push({ baseId, tableId, jump });
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when no build or compaction is queued or running (tests, benches). */
  async idle(): Promise<void> {
    while (this.running || this.compacting.size > 0) {
      if (this.running) await this.running;
      await Promise.all(this.compacting.values());
    }
  }

  /**
   * Where the page `skip` listed rows after the row `afterId` starts: the blocks after `afterId`'s own are
   * summed until the sum passes what is left of `skip`; the rest is counted in that one block. null: the
   * listing has no row there (the page is empty).
   */
  async locate(baseId: number, tableId: string, jump: PositionJump, afterId: number, skip: number): Promise<BlockStart | null> {
    const first = Math.floor(afterId / BLOCK);
    const inFirst = await countListedBetween(this.db, this.dialect, baseId, tableId, jump, afterId, (first + 1) * BLOCK);
    if (skip < inFirst) return { afterId, offset: skip };
    const left = skip - inFirst;
    const { rows } = await sql<{ block: number | string; before: number | string; stored: number | string; blocks: number | string }>`
      select block, before, stored, blocks from (
        select block, listed, sum(listed) over (order by block) - listed as before, sum(n) over () as stored, count(*) over () as blocks
        from (select block, sum(listed) as listed, count(*) as n from row_position_blocks
              where base_id = ${baseId} and table_id = ${tableId} and block > ${first} group by block) as b
      ) as c where before + listed > ${left} order by block limit 1`.execute(this.db);
    const row = rows[0];
    if (!row) return null;
    if (this.dialect === 'postgres') {
      // Delta rows grown past twice what the last compaction left (and 1,000): merged in the background.
      const stored = Number(row.stored);
      if (stored > 1000 && stored > 2 * Math.max(Number(row.blocks), this.compacted.get(key(baseId, tableId)) ?? 0)) this.compactSoon(baseId, tableId);
    }
    return { afterId: Number(row.block) * BLOCK - 1, offset: left - Number(row.before) };
  }

  /** Merges a PostgreSQL table's delta rows into one per block, in one statement (writers insert only: none waits). */
  async compact(baseId: number, tableId: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    const { rows } = await sql<{ n: number | string }>`with gone as (
        delete from row_position_blocks where base_id = ${baseId} and table_id = ${tableId} returning block, listed
      ), merged as (
        insert into row_position_blocks (base_id, table_id, block, listed)
        select ${baseId}, ${tableId}, block, sum(listed) from gone group by block having sum(listed) <> 0
        returning 1
      )
      select count(*) as n from merged`.execute(this.db);
    this.compacted.set(key(baseId, tableId), Number(rows[0]?.n ?? 0));
  }

  private compactSoon(baseId: number, tableId: string): void {
    const k = key(baseId, tableId);
    if (this.compacting.has(k)) return;
    const done = this.compact(baseId, tableId)
      .catch((error) => this.log?.(error, `position blocks ${k} compaction`))
      .finally(() => this.compacting.delete(k));
    this.compacting.set(k, done);
  }

  /** Drops a table's blocks (its position index went, or its table). */
  async drop(baseId: number, tableId: string): Promise<void> {
    await this.idle();
    await this.dropNow(baseId, tableId);
  }

  private async dropNow(baseId: number, tableId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`delete from row_position_defs where base_id = ${baseId} and table_id = ${tableId}`.execute(trx);
      await sql`delete from row_position_blocks where base_id = ${baseId} and table_id = ${tableId}`.execute(trx);
    });
    if (this.ready?.delete(key(baseId, tableId))) this.stats.dropped++;
  }

  /** Drops every table's blocks of a base being purged (before its rows go: their deletes then count into nothing). */
  async dropBase(baseId: number): Promise<void> {
    await this.idle();
    const { rows } = await sql<{ table_id: string }>`select table_id from row_position_defs where base_id = ${baseId}`.execute(this.db);
    for (const row of rows) await this.drop(baseId, row.table_id);
  }

  /** The blocks of a table as stored (tests: compared with a fresh count). */
  async countsOf(baseId: number, tableId: string): Promise<Map<number, number>> {
    const { rows } = await sql<{ block: number | string; listed: number | string }>`select block, sum(listed) as listed from row_position_blocks
      where base_id = ${baseId} and table_id = ${tableId} group by block having sum(listed) <> 0 order by block`.execute(this.db);
    return new Map(rows.map((r) => [Number(r.block), Number(r.listed)]));
  }

  private async load(): Promise<Set<string>> {
    if (this.ready) return this.ready;
    this.loading ??= sql<{ base_id: number | string; table_id: string }>`select base_id, table_id from row_position_defs where state = 'ready'`
      .execute(this.db)
      .then(({ rows }) => {
        this.ready = new Set(rows.map((r) => key(Number(r.base_id), r.table_id)));
        return this.ready;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      const k = key(next.baseId, next.tableId);
      try {
        await this.build(next.baseId, next.tableId, next.jump);
      } catch (error) {
        this.stats.failed++;
        this.log?.(error, `position blocks ${k}`);
      } finally {
        this.queued.delete(k);
      }
    }
  }

  /**
   * The definition first (`building`: from then on the triggers count every write of the table into its
   * blocks), on PostgreSQL a wait for the transactions that may have written without seeing it, then the
   * blocks counted `batchBlocks` at a time through the position index: each batch, in one transaction
   * (SQLite: the writer held; PostgreSQL: one statement, one snapshot), drops the counts the triggers wrote
   * for its blocks and counts their rows as it sees them — a write committed after it keeps its own delta
   * and is not counted, so every row counts once. Then `ready`.
   */
  private async build(baseId: number, tableId: string, jump: PositionJump): Promise<void> {
    const ready = await this.load();
    if (ready.has(key(baseId, tableId))) return;
    // Another instance on the same database may have built them, or be building them (a definition younger
    // than BUILDING_MS): taken as they are. An older `building` one is a crashed build's.
    const { rows: defs } = await sql<{ state: string; created_at: number | string }>`select state, created_at from row_position_defs
      where base_id = ${baseId} and table_id = ${tableId}`.execute(this.db);
    const def = defs[0];
    if (def?.state === 'ready') {
      ready.add(key(baseId, tableId));
      return;
    }
    if (def && this.now() - Number(def.created_at) < BUILDING_MS) return;
    await this.db.transaction().execute(async (trx) => {
      // A crashed build's definition and counts are started over.
      await sql`delete from row_position_defs where base_id = ${baseId} and table_id = ${tableId}`.execute(trx);
      await sql`delete from row_position_blocks where base_id = ${baseId} and table_id = ${tableId}`.execute(trx);
      await sql`insert into row_position_defs (base_id, table_id, state, created_at) values (${baseId}, ${tableId}, 'building', ${this.now()})`.execute(trx);
    });
    try {
      if (this.dialect === 'postgres') await waitForOlderTransactions(this.db, 'position blocks');
      const { rows } = await sql<{ top: number | string | null }>`select max(id) as top from base_rows where base_id = ${baseId} and table_id = ${tableId}`.execute(this.db);
      const last = Math.floor(Number(rows[0]?.top ?? 0) / BLOCK);
      for (let from = 0; from <= last; from += this.options.batchBlocks) {
        const to = from + this.options.batchBlocks;
        await this.db.transaction().execute(async (trx) => {
          const indexedBy = this.dialect === 'sqlite' ? sql` indexed by ${sql.id(jump.index)}` : sql``;
          const scope = sql`base_id = ${baseId} and table_id = ${tableId} and block >= ${from} and block < ${to}`;
          const counted = sql`select ${baseId}, ${tableId}, base_rows.id >> ${sql.lit(BLOCK_BITS)}, count(*) from base_rows${indexedBy}
            where ${tableScope(baseId, tableId)} and ${jump.listed}
              and base_rows.id >= ${from * BLOCK} and base_rows.id < ${to * BLOCK}
            group by base_rows.id >> ${sql.lit(BLOCK_BITS)}`;
          if (this.dialect === 'postgres') {
            await sql`with gone as (delete from row_position_blocks where ${scope})
              insert into row_position_blocks (base_id, table_id, block, listed) ${counted}`.execute(trx);
          } else {
            await sql`delete from row_position_blocks where ${scope}`.execute(trx);
            await sql`insert into row_position_blocks (base_id, table_id, block, listed) ${counted}`.execute(trx);
          }
        });
      }
      await sql`update row_position_defs set state = 'ready' where base_id = ${baseId} and table_id = ${tableId}`.execute(this.db);
    } catch (error) {
      // No half-built blocks: their definition would make every write of the table pay for them.
      await this.dropNow(baseId, tableId).catch(() => undefined);
      throw error;
    }
    const { rows: stored } = await sql<{ n: number | string }>`select count(*) as n from row_position_blocks where base_id = ${baseId} and table_id = ${tableId}`.execute(this.db);
    this.compacted.set(key(baseId, tableId), Number(stored[0]?.n ?? 0));
    ready.add(key(baseId, tableId));
    this.stats.built++;
  }
}
