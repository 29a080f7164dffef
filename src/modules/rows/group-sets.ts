import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db, DialectName, Executor } from '../../db/index.js';
import { indexableKey } from '../filters/index.js';
import type { BaseMetadata } from './metadata.js';
import { scopableTableId } from './rows.repository.js';
import { waitForOlderTransactions } from './older-transactions.js';

/**
 * Group sets (issue 34; migration 0046; docs/architecture.md "Big tables", docs/sql.md "Grouped queries
 * from a group set"): aggregates maintained with the rows, so a grouped SQL statement over a big table
 * costs what its groups cost, not what the table costs.
 *
 * A set serves one table, one group column and at most one number column: a row per group value in
 * `row_group_rows` with the number of rows, and the count, sum and inexact count of the number column's
 * values. Triggers on `base_rows` keep every set of a written row's table exact in the writing statement
 * (every write path: appends, updates, deletes, archiving, SQL writes, imports, restores). Created in the
 * background when a grouped statement over a table of at least `minRows` rows could be answered by it
 * (sql/group-set-plans.ts), at most `maxSets` per database; refused (and not tried again for `recountMs`)
 * when the table has more than `maxGroups` group values. `reconcile` (after every structural commit) drops
 * the sets whose table or columns went or changed type, and queues a set for the new type.
 *
 * A build is one transaction (PostgreSQL: under the base's write lock, `base_metadata` FOR UPDATE, which
 * every row writer takes first, so no write is half counted): its definition and rows appear together,
 * and a crash leaves neither.
 */

/** How the group value reads (the SQL endpoint's GROUP BY value, sql/field-sql.ts). */
export type GroupKind = 'text' | 'number' | 'bool';

const GROUP_KINDS: Readonly<Record<string, GroupKind>> = {
  text: 'text',
  'long-text': 'text',
  email: 'text',
  url: 'text',
  'auto-number': 'text',
  'single-select': 'text',
  number: 'number',
  duration: 'number',
  rate: 'number',
  checkbox: 'bool',
};

const VALUE_TYPES = new Set(['number', 'duration', 'rate']);

/** The group kind of a column type, when a set can group by it. */
export function groupKindOf(columnType: string): GroupKind | undefined {
  return GROUP_KINDS[columnType];
}

/** True when a set can sum a column of this type. */
export function summableType(columnType: string): boolean {
  return VALUE_TYPES.has(columnType);
}

export interface GroupSetUse {
  groupKey: string;
  /** The group column's type when the set was built (another type: the set is not used). */
  groupType: string;
  valueKey?: string;
  valueType?: string;
}

export interface GroupSet extends GroupSetUse {
  /** `row_group_rows.set_id`. */
  id: number;
  name: string;
  baseId: number;
  tableId: string;
  groupKind: GroupKind;
}

export interface GroupSetOptions {
  /** Tables with fewer rows get no set (the row indexes' threshold). */
  minRows: number;
  /** Sets per database. */
  maxSets: number;
  /** A table with more group values than this gets no set for that column. */
  maxGroups: number;
  /** How long a table found too small (or a column with too many groups) is not counted again. */
  recountMs: number;
  /** Off: no set is built or read (tests and benches compare both paths). */
  enabled: boolean;
}

export const DEFAULT_GROUP_SET_OPTIONS: GroupSetOptions = { minRows: 20_000, maxSets: 500, maxGroups: 10_000, recountMs: 60_000, enabled: true };

/** The set of a use (short: a digest of what it serves). */
export function groupSetName(baseId: number, tableId: string, use: GroupSetUse): string {
  const signature = JSON.stringify([tableId, use.groupKey, use.groupType, use.valueKey ?? null, use.valueType ?? null]);
  return `brg_${Number(baseId)}_${createHash('sha256').update(signature).digest('hex').slice(0, 24)}`;
}

interface DefRow {
  id: string | number;
  name: string;
  base_id: string | number;
  table_id: string;
  group_key: string;
  group_kind: string;
  group_type: string;
  value_key: string | null;
  value_type: string | null;
}

function fromRow(r: DefRow): GroupSet {
  return {
    id: Number(r.id),
    name: r.name,
    baseId: Number(r.base_id),
    tableId: r.table_id,
    groupKey: r.group_key,
    groupKind: r.group_kind as GroupKind,
    groupType: r.group_type,
    ...(r.value_key ? { valueKey: r.value_key, valueType: r.value_type ?? '' } : {}),
  };
}

class TooManyGroups extends Error {}

/** The first key of the advisory locks builds hold (the second: `hashtext` of the set's name). */
const BUILD_LOCK = 340_146;


export class GroupSets {
  private sets: Map<string, GroupSet> | null = null;
  private loading: Promise<Map<string, GroupSet>> | null = null;
  private readonly queue: Array<{ name: string; baseId: number; tableId: string; use: GroupSetUse }> = [];
  private readonly queued = new Set<string>();
  private running: Promise<void> | null = null;
  /** table (or set name, too many groups) → when it was found so */
  private readonly refused = new Map<string, number>();
  /** Built, dropped, refused and failed builds (for /metrics). */
  readonly stats = { built: 0, dropped: 0, refused: 0, failed: 0 };
  readonly options: GroupSetOptions;
  /** Called after a PostgreSQL build's definition is committed, before its rows are counted (tests: a write meanwhile). */
  beforeFill?: () => Promise<void>;
  /** Called in a build's transaction after its rows are counted (tests: a build that fails there). */
  onFill?: () => Promise<void>;
  private recovered = false;
  /** PostgreSQL: rows each set had after its last compaction or build, and the sets being compacted. */
  private readonly compacted = new Map<number, number>();
  private readonly compacting = new Map<number, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly now: () => number,
    options: GroupSetOptions = DEFAULT_GROUP_SET_OPTIONS,
    private readonly log?: (error: unknown, what: string) => void,
  ) {
    this.options = { ...options };
  }

  /** Loads the built sets from the database now (after dropping crashed builds), not on first use (BaseData.warm). */
  async warm(): Promise<void> {
    await this.load();
  }

  /** A grouped statement that the set of `use` could answer ran on this table: build it in the background. */
  note(baseId: number, tableId: string, use: GroupSetUse): void {
    if (!this.options.enabled || !validUse(tableId, use)) return;
    const name = groupSetName(baseId, tableId, use);
    if (this.sets?.has(name) || this.queued.has(name)) return;
    const at = this.refused.get(`${baseId}/${tableId}`) ?? this.refused.get(name);
    if (at !== undefined && this.now() - at < this.options.recountMs) return;
    this.queued.add(name);
    this.queue.push({ name, baseId, tableId, use });
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /**
   * The built set that answers statements grouping `tableId` by `groupKey` (of type `groupType`) and
   * summing `valueKey` (of `valueType`; none: any set of the group column counts).
   */
  find(baseId: number, tableId: string, use: GroupSetUse): GroupSet | undefined {
    if (!this.options.enabled) return undefined;
    if (!this.sets) {
      void this.load().catch((error) => this.log?.(error, 'group sets'));
      return undefined;
    }
    let found: GroupSet | undefined;
    for (const set of this.sets.values()) {
      if (set.baseId !== baseId || set.tableId !== tableId || set.groupKey !== use.groupKey || set.groupType !== use.groupType) continue;
      if (use.valueKey === undefined) {
        found ??= set;
      } else if (set.valueKey === use.valueKey && set.valueType === use.valueType) {
        return set;
      }
    }
    return use.valueKey === undefined ? found : undefined;
  }

  /**
   * Whether a set can answer now: it is still defined (another process may have dropped it) and, when
   * the statement sums, none of its values is inexact (see migration 0046).
   */
  async usable(set: GroupSet, sums: boolean, executor: Executor = this.db): Promise<boolean> {
    const { rows } = await sql<{ present: number | string; inexact: number | string | null; stored: number | string | null }>`select
      (select count(*) from row_group_defs where id = ${set.id} and state = 'ready') as present,
      ${sums ? sql`(select sum(inexact) from row_group_rows where set_id = ${set.id})` : sql`0`} as inexact,
      ${this.dialect === 'postgres' ? sql`(select count(*) from row_group_rows where set_id = ${set.id})` : sql`0`} as stored`.execute(executor);
    const row = rows[0];
    if (!row || Number(row.present) === 0) {
      this.sets?.delete(set.name);
      return false;
    }
    // PostgreSQL's delta rows grown past twice what the last compaction left (and 1,000): merged in the background.
    const stored = Number(row.stored ?? 0);
    if (stored > 1000 && stored > 2 * (this.compacted.get(set.id) ?? 0)) this.compactSoon(set);
    return Number(row.inexact ?? 0) === 0;
  }

  /**
   * Merges a PostgreSQL set's delta rows into one row per group value, in one statement (one snapshot: a
   * delta committed meanwhile is not deleted and stays as it is). Writers insert only, so none waits.
   */
  async compact(set: GroupSet): Promise<void> {
    if (this.dialect !== 'postgres') return;
    const { rows } = await sql<{ n: number | string }>`with gone as (
        delete from row_group_rows where set_id = ${set.id} returning num, txt, cnt, vcnt, vsum, inexact
      ), merged as (
        insert into row_group_rows (set_id, num, txt, cnt, vcnt, vsum, inexact)
        select ${set.id}, num, txt, sum(cnt), sum(vcnt), sum(vsum), sum(inexact) from gone group by num, txt
        having sum(cnt) <> 0 or sum(vcnt) <> 0 or sum(inexact) <> 0
        returning 1
      )
      select count(*) as n from merged`.execute(this.db);
    this.compacted.set(set.id, Number(rows[0]?.n ?? 0));
  }

  private compactSoon(set: GroupSet): void {
    if (this.compacting.has(set.id)) return;
    const done = this.compact(set)
      .catch((error) => this.log?.(error, `group set ${set.name} compaction`))
      .finally(() => this.compacting.delete(set.id));
    this.compacting.set(set.id, done);
  }

  /** Resolves when no build is queued or running (tests, benches). */
  async idle(): Promise<void> {
    while (this.running || this.compacting.size > 0) {
      if (this.running) await this.running;
      await Promise.all(this.compacting.values());
    }
  }

  /** The sets of a table (tests, docs). */
  async setsOf(baseId: number, tableId: string): Promise<GroupSet[]> {
    return [...(await this.load()).values()].filter((s) => s.baseId === baseId && s.tableId === tableId);
  }

  /** Number of sets this database has (for /metrics). */
  count(): number {
    return this.sets?.size ?? 0;
  }

  /**
   * After a structural commit: drops the sets whose table or column is gone or whose column changed type
   * (a type change also queues the set of the new type, if one can be); a deleted base's (meta null) all go.
   */
  async reconcile(baseId: number, meta: BaseMetadata | null): Promise<void> {
    await this.idle();
    const sets = [...(await this.load()).values()].filter((s) => s.baseId === baseId);
    for (const set of sets) {
      const table = meta?.tables.find((t) => t._id === set.tableId);
      const group = table?.columns.find((c) => c.key === set.groupKey);
      const value = set.valueKey === undefined ? undefined : table?.columns.find((c) => c.key === set.valueKey);
      const valueSame = set.valueKey === undefined || value?.type === set.valueType;
      if (group && group.type === set.groupType && valueSame) continue;
      await this.drop(set);
      const kept = value && summableType(value.type) ? { valueKey: value.key, valueType: value.type } : {};
      if (group && groupKindOf(group.type)) this.note(baseId, set.tableId, { groupKey: group.key, groupType: group.type, ...kept });
    }
  }

  private async load(): Promise<Map<string, GroupSet>> {
    if (this.sets) return this.sets;
    this.loading ??= (this.recovered ? Promise.resolve([]) : this.recover().finally(() => (this.recovered = true)))
      .then(() => sql<DefRow>`select id, name, base_id, table_id, group_key, group_kind, group_type, value_key, value_type from row_group_defs where state = 'ready'`.execute(this.db))
      .then(({ rows }) => {
        this.sets = new Map(rows.map((r) => [r.name, fromRow(r)]));
        return this.sets;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      try {
        await this.build(next.name, next.baseId, next.tableId, next.use);
      } catch (error) {
        if (error instanceof TooManyGroups) {
          this.refused.set(next.name, this.now());
          this.stats.refused++;
        } else {
          this.stats.failed++;
          this.log?.(error, `group set ${next.name}`);
          // Another process may have built it (its name is taken): the definitions are read again.
          this.sets = null;
        }
      } finally {
        this.queued.delete(next.name);
      }
    }
  }

  private async build(name: string, baseId: number, tableId: string, use: GroupSetUse): Promise<void> {
    const sets = await this.load();
    if (sets.has(name) || sets.size >= this.options.maxSets) return;
    const kind = groupKindOf(use.groupType)!;
    const tableKey = `${baseId}/${tableId}`;
    const { rows: counted } = await sql<{ n: number | string }>`select count(*) as n from (select 1 from base_rows where base_id = ${baseId} and table_id = ${tableId} limit ${this.options.minRows}) as t`.execute(this.db);
    if (Number(counted[0]?.n ?? 0) < this.options.minRows) {
      this.refused.set(tableKey, this.now());
      return;
    }
    this.refused.delete(tableKey);
    const set = this.dialect === 'postgres' ? await this.buildPostgres(name, baseId, tableId, kind, use) : await this.buildSqlite(name, baseId, tableId, kind, use);
    sets.set(name, set);
    this.stats.built++;
  }

  /** SQLite (one writer): the definition and its rows in one transaction. */
  private async buildSqlite(name: string, baseId: number, tableId: string, kind: GroupKind, use: GroupSetUse): Promise<GroupSet> {
    return this.db.transaction().execute(async (trx) => {
      const id = await this.define(trx, name, baseId, tableId, kind, use, 'ready');
      await this.fill(trx, id, baseId, tableId, kind, use);
      return { id, name, baseId, tableId, groupKind: kind, ...use } satisfies GroupSet;
    });
  }

  /**
   * PostgreSQL: appends take the base's lock at the end of their transaction (base-writer.ts `lockLate`),
   * so the base's lock does not keep uncommitted rows out of a build. Instead: the definition is
   * committed first (`building`; from then on the triggers add a delta row for every write into it), then
   * the build waits for the transactions that may have written without seeing it (every write after that
   * has its delta), then one statement — one snapshot — deletes the deltas it sees and counts the table's
   * rows it sees: a write committed after that snapshot is neither counted nor has its delta deleted, so
   * it adds itself once. No lock but the snapshot: writers go on. Then the set is marked `ready`. All of
   * it under a session advisory lock on the name: `recover` tells a dead build's definition from a live one.
   */
  private async buildPostgres(name: string, baseId: number, tableId: string, kind: GroupKind, use: GroupSetUse): Promise<GroupSet> {
    return this.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${BUILD_LOCK}, hashtext(${name}))`.execute(conn);
      try {
        const id = await this.define(conn, name, baseId, tableId, kind, use, 'building');
        try {
          await waitForOlderTransactions(this.db, 'group set');
          await this.beforeFill?.();
          await this.db.transaction().execute(async (trx) => {
            await sql`set local statement_timeout = '600s'`.execute(trx);
            await this.fill(trx, id, baseId, tableId, kind, use);
            await sql`update row_group_defs set state = 'ready' where id = ${id}`.execute(trx);
          });
        } catch (error) {
          // No half-built set: its definition would make every write of the table pay for it.
          await this.dropId(this.db, id).catch(() => undefined);
          throw error;
        }
        return { id, name, baseId, tableId, groupKind: kind, ...use } satisfies GroupSet;
      } finally {
        await sql`select pg_advisory_unlock(${BUILD_LOCK}, hashtext(${name}))`.execute(conn);
      }
    });
  }

  private async define(executor: Executor, name: string, baseId: number, tableId: string, kind: GroupKind, use: GroupSetUse, state: 'ready' | 'building'): Promise<number> {
    const { rows } = await sql<{ id: number | string }>`insert into row_group_defs (name, base_id, table_id, group_key, group_kind, group_type, value_key, value_type, state, created_at)
      values (${name}, ${baseId}, ${tableId}, ${use.groupKey}, ${kind}, ${use.groupType}, ${use.valueKey ?? null}, ${use.valueType ?? null}, ${state}, ${this.now()}) returning id`.execute(executor);
    return Number(rows[0]!.id);
  }

  /** The set's rows from the table's rows as this transaction sees them; refused past `maxGroups`. */
  private async fill(executor: Executor, id: number, baseId: number, tableId: string, kind: GroupKind, use: GroupSetUse): Promise<void> {
    await this.buildSql(id, baseId, tableId, kind, use).execute(executor);
    const { rows: groups } = await sql<{ n: number | string }>`select count(*) as n from row_group_rows where set_id = ${id}`.execute(executor);
    const n = Number(groups[0]?.n ?? 0);
    await this.onFill?.();
    if (n > this.options.maxGroups) throw new TooManyGroups(`more than ${this.options.maxGroups} groups`);
    this.compacted.set(id, n);
  }

  /**
   * Drops the definitions crashed builds left (PostgreSQL: `building`, with no session holding its
   * build lock); returns their names.
   */
  async recover(): Promise<string[]> {
    if (this.dialect !== 'postgres') return [];
    const { rows } = await sql<{ id: number | string; name: string }>`select id, name from row_group_defs where state = 'building'`.execute(this.db);
    const dropped: string[] = [];
    for (const row of rows) {
      await this.db.connection().execute(async (conn) => {
        const { rows: locked } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${BUILD_LOCK}, hashtext(${row.name})) as ok`.execute(conn);
        if (!locked[0]?.ok) return;
        try {
          await this.dropId(conn, Number(row.id));
          dropped.push(row.name);
        } finally {
          await sql`select pg_advisory_unlock(${BUILD_LOCK}, hashtext(${row.name}))`.execute(conn);
        }
      });
    }
    return dropped;
  }

  /** The set's rows from the table's rows: the same values the triggers of migration 0046 add. */
  private buildSql(id: number, baseId: number, tableId: string, kind: GroupKind, use: GroupSetUse): RawBuilder<unknown> {
    const scope = sql`base_id = ${baseId} and table_id = ${tableId}`;
    if (this.dialect === 'postgres') {
      const g = sql`(data -> cast(${use.groupKey} as text))`;
      const num =
        kind === 'number'
          ? sql`(case when jsonb_typeof(${g}) = 'number' then (data ->> cast(${use.groupKey} as text))::float8 end)`
          : kind === 'bool'
            ? sql`(case when ${g} = 'true'::jsonb then 1 else 0 end)::float8`
            : sql`null::float8`;
      const txt = kind === 'text' ? sql`(case when jsonb_typeof(${g}) = 'string' then nullif(data ->> cast(${use.groupKey} as text), '') end)` : sql`null::text`;
      const v = use.valueKey
        ? sql`(case when jsonb_typeof(data -> cast(${use.valueKey} as text)) = 'number' then (data ->> cast(${use.valueKey} as text))::float8 end)`
        : sql`null::float8`;
      // One statement, one snapshot: the deltas the triggers wrote for rows it counts go (a delta committed
      // after its snapshot stays, with its row not counted here).
      return sql`with gone as (delete from row_group_rows where set_id = ${id})
        insert into row_group_rows (set_id, num, txt, cnt, vcnt, vsum, inexact)
        select ${id}, num, txt, count(*), count(v), coalesce(sum(case when abs(v) >= 268435456 or v <> trunc(v) then 0 else v end), 0),
          count(case when abs(v) >= 268435456 or v <> trunc(v) then 1 end)
        from (select ${num} as num, ${txt} as txt, ${v} as v from base_rows where ${scope}) as r
        group by num, txt`;
    }
    const path = `$."${use.groupKey}"`;
    const type = sql`json_type(data, ${path})`;
    const value = sql`json_extract(data, ${path})`;
    const g =
      kind === 'number'
        ? sql`(case when ${type} in ('integer', 'real') then ${value} end)`
        : kind === 'bool'
          ? sql`(case when ${type} = 'true' then 1 else 0 end)`
          : sql`(case when ${type} = 'text' then nullif(${value}, '') end)`;
    const vPath = use.valueKey ? `$."${use.valueKey}"` : undefined;
    const v = vPath ? sql`(case when json_type(data, ${vPath}) in ('integer', 'real') then json_extract(data, ${vPath}) end)` : sql`null`;
    return sql`insert into row_group_rows (set_id, g, cnt, vcnt, vsum, inexact)
      select ${id}, coalesce(g, ''), count(*), count(v), coalesce(sum(case when abs(v) >= 268435456 or v <> round(v) then 0 else v end), 0),
        count(case when abs(v) >= 268435456 or v <> round(v) then 1 end)
      from (select ${g} as g, ${v} as v from base_rows where ${scope}) as r
      group by coalesce(g, '')`;
  }

  /** Drops every set of a base being purged (its definitions and rows would outlive it), built or building. */
  async dropBase(baseId: number): Promise<void> {
    await this.idle();
    const { rows } = await sql<{ id: number | string; name: string }>`select id, name from row_group_defs where base_id = ${baseId}`.execute(this.db);
    for (const row of rows) {
      await this.dropId(this.db, Number(row.id));
      this.sets?.delete(row.name);
      this.stats.dropped++;
    }
  }

  private async drop(set: GroupSet): Promise<void> {
    await this.dropId(this.db, set.id);
    this.sets?.delete(set.name);
    this.stats.dropped++;
  }

  private async dropId(db: Db, id: number): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await sql`delete from row_group_defs where id = ${id}`.execute(trx);
      await sql`delete from row_group_rows where set_id = ${id}`.execute(trx);
    });
  }
}

function validUse(tableId: string, use: GroupSetUse): boolean {
  if (!scopableTableId(tableId) || !indexableKey(use.groupKey) || use.groupKey.length > 64 || !groupKindOf(use.groupType)) return false;
  if (use.valueKey === undefined) return true;
  return indexableKey(use.valueKey) && use.valueKey.length > 0 && use.valueKey.length <= 64 && summableType(use.valueType ?? '');
}
