import { sql, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';
import { PREPARED_MARK } from './prepared.js';

/** The name of the one gate that statements sent together (`WriteStatement.together`) share. */
const SHARED_GATE = 'shared_gate';
/** The name of a statement's own gate. */
const OWN_GATE = 'write_gate';
/** Numbers each statement's parts, so the parts of several statements can be sent as one. */
let statements = 0;

/**
 * A kind of row a write's one statement inserts (new rows, operation-log entries, events): written
 * by ONE part per statement, whatever the number of writes the statement carries, from all their
 * records in one JSON parameter. So the statement's text depends on which kinds it has, not on how
 * many writes or rows: PostgreSQL parses and plans it once per connection (a named prepared
 * statement, see prepared.ts), where planning a statement of a part per write cost more than running
 * it.
 */
export class RecordSet {
  private static sets = 0;
  /** Parts are written in the order the sets were made (module load order), whatever order writes add records in. */
  readonly rank = RecordSet.sets++;

  /**
   * `parts(gate, records)`: the set's CTEs (`name AS (…), …`; names unique among all sets), writing
   * only when `gate` (a one-row CTE) has its row; `records`: a `json` array, one element per `add`,
   * in the order added.
   */
  constructor(readonly parts: (gate: RawBuilder<unknown>, records: RawBuilder<unknown>) => RawBuilder<unknown>) {}
}

/**
 * Several data-modifying statements sent to PostgreSQL as ONE statement (`WITH a AS (INSERT …),
 * b AS (INSERT …) SELECT …`): one round trip, and — sent outside a transaction — its own atomic
 * transaction, so no BEGIN and COMMIT round trips either. Every part selects FROM `gate` (a one-row
 * CTE, or none when the gate fails), so the whole statement writes everything or nothing; the answer
 * says whether the gate passed.
 */
export class WriteStatement {
  private readonly parts: RawBuilder<unknown>[] = [];
  /** Each record set's records, as JSON texts (one element each). */
  private readonly records = new Map<RecordSet, string[]>();
  private readonly prefix = `w${(statements = (statements + 1) % 0x7fffffff).toString(36)}_`;
  private count = 0;
  /** The gate's name, to select FROM in each part (it has one row when the write may go ahead). */
  readonly gate: RawBuilder<unknown>;
  private readonly ownGate: RawBuilder<unknown> | undefined;

  /**
   * `gate`: a CTE body returning one row when the write may go ahead, none otherwise (default: always
   * one); `'shared'`: the parts select from the gate given to `together`, which alone sends them.
   */
  constructor(gate: RawBuilder<unknown> | 'shared' = sql`SELECT 1 AS go`) {
    this.shared = gate === 'shared';
    this.gate = sql.raw(this.shared ? SHARED_GATE : OWN_GATE);
    this.ownGate = gate === 'shared' ? undefined : gate;
  }

  private readonly shared: boolean;

  /**
   * A concurrent append's statement (PostgreSQL, PG_CONCURRENT_APPENDS): its events take the
   * commit-order lock shared and draw their ids as one block (events.repository.ts).
   */
  concurrent = false;

  /** Adds `body` (a SELECT, or an INSERT/UPDATE/DELETE joining `gate`) as a CTE; returns its name to select from. */
  add(body: RawBuilder<unknown>): RawBuilder<unknown> {
    const name = `${this.prefix}${this.count++}`;
    this.parts.push(sql`${sql.raw(name)} AS (${body})`);
    return sql.raw(name);
  }

  /** Adds one record (its JSON text: an object) to `set`'s part of the statement. */
  addRecord(set: RecordSet, json: string): void {
    const texts = this.records.get(set);
    if (texts === undefined) this.records.set(set, [json]);
    else texts.push(json);
  }

  /** Runs it; true when the gate passed (every part wrote), false when it wrote nothing. */
  async execute(db: Executor): Promise<boolean> {
    if (this.shared) throw new Error('WriteStatement: a statement under a shared gate is sent by WriteStatement.together');
    return passed(db, sql`${this.gate} AS (${this.ownGate!})`, this.gate, [this]);
  }

  /**
   * Sends the parts of several statements made with `'shared'` as ONE statement under one `gate`
   * (e.g. one revision bump for several appends): all of them write, or none. Each record set's
   * records of all of them go in one part, in the order of `members`.
   */
  static async together(db: Executor, gate: RawBuilder<unknown> | SharedGate, members: readonly WriteStatement[]): Promise<boolean> {
    if (members.some((m) => !m.shared)) throw new Error('WriteStatement.together: every member must be made with a shared gate');
    const { before, body } = 'before' in gate ? gate : { before: undefined, body: gate };
    const part = sql`${sql.raw(SHARED_GATE)} AS (${body})`;
    return passed(db, before === undefined ? part : sql`${before}, ${part}`, sql.raw(SHARED_GATE), members);
  }
}

/**
 * A shared gate that needs CTEs of its own before it (`before`: `name AS (…), …`, names not used by
 * any record set): e.g. a lock, then a write, with the gate's body selecting the written row.
 */
export interface SharedGate {
  before: RawBuilder<unknown>;
  body: RawBuilder<unknown>;
}

async function passed(db: Executor, gatePart: RawBuilder<unknown>, gate: RawBuilder<unknown>, members: readonly WriteStatement[]): Promise<boolean> {
  const parts = [gatePart];
  const sets = new Map<RecordSet, string[]>();
  for (const m of members) {
    parts.push(...m['parts']);
    for (const [set, texts] of m['records']) {
      const all = sets.get(set);
      if (all === undefined) sets.set(set, [...texts]);
      else all.push(...texts);
    }
  }
  for (const [set, texts] of [...sets].sort(([a], [b]) => a.rank - b.rank)) parts.push(set.parts(gate, sql`CAST(${`[${texts.join(',')}]`} AS json)`));
  // Only record sets: the text is the same for every statement with the same sets, so it is prepared
  // once per connection. Parts added one by one carry names unique to their statement: sent unnamed.
  const mark = parts.length === sets.size + 1 ? sql.raw(PREPARED_MARK) : sql``;
  const { rows } = await sql<{ passed: number }>`WITH ${sql.join(parts, sql`, `)} SELECT count(*)::int AS passed FROM ${gate}${mark}`.execute(db);
  return Number(rows[0]?.passed ?? 0) > 0;
}
