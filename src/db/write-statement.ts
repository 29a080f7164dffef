import { sql, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/** The name of the one gate that statements sent together (`WriteStatement.together`) share. */
const SHARED_GATE = 'shared_gate';
/** Numbers each statement's parts, so the parts of several statements can be sent as one. */
let statements = 0;

/**
 * Several data-modifying statements sent to PostgreSQL as ONE statement (`WITH a AS (INSERT …),
 * b AS (INSERT …) SELECT …`): one round trip, and — sent outside a transaction — its own atomic
 * transaction, so no BEGIN and COMMIT round trips either. Every part selects FROM `gate` (a one-row
 * CTE, or none when the gate fails), so the whole statement writes everything or nothing; the answer
 * says whether the gate passed.
 */
export class WriteStatement {
  private readonly parts: RawBuilder<unknown>[] = [];
  private readonly prefix = `w${(statements = (statements + 1) % 0x7fffffff).toString(36)}_`;
  private count = 0;
  /** The gate's name, to select FROM in each part (it has one row when the write may go ahead). */
  readonly gate: RawBuilder<unknown>;

  /**
   * `gate`: a CTE body returning one row when the write may go ahead, none otherwise (default: always
   * one); `'shared'`: the parts select from the gate given to `together`, which alone sends them.
   */
  constructor(gate: RawBuilder<unknown> | 'shared' = sql`SELECT 1 AS go`) {
    this.gate = gate === 'shared' ? sql.raw(SHARED_GATE) : this.add(gate);
    this.shared = gate === 'shared';
  }

  private readonly shared: boolean;

  /** Adds `body` (a SELECT, or an INSERT/UPDATE/DELETE joining `gate`) as a CTE; returns its name to select from. */
  add(body: RawBuilder<unknown>): RawBuilder<unknown> {
    const name = `${this.prefix}${this.count++}`;
    this.parts.push(sql`${sql.raw(name)} AS (${body})`);
    return sql.raw(name);
  }

  /** Runs it; true when the gate passed (every part wrote), false when it wrote nothing. */
  async execute(db: Executor): Promise<boolean> {
    if (this.shared) throw new Error('WriteStatement: a statement under a shared gate is sent by WriteStatement.together');
    return passed(db, this.parts, this.gate);
  }

  /**
   * Sends the parts of several statements made with `'shared'` as ONE statement under one `gate`
   * (e.g. one revision bump for several appends): all of them write, or none.
   */
  static async together(db: Executor, gate: RawBuilder<unknown>, members: readonly WriteStatement[]): Promise<boolean> {
    if (members.some((m) => !m.shared)) throw new Error('WriteStatement.together: every member must be made with a shared gate');
    return passed(db, [sql`${sql.raw(SHARED_GATE)} AS (${gate})`, ...members.flatMap((m) => m.parts)], sql.raw(SHARED_GATE));
  }
}

async function passed(db: Executor, parts: RawBuilder<unknown>[], gate: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ passed: number }>`WITH ${sql.join(parts, sql`, `)} SELECT count(*)::int AS passed FROM ${gate}`.execute(db);
  return Number(rows[0]?.passed ?? 0) > 0;
}
