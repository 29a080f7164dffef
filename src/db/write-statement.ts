import { sql, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/**
 * Several data-modifying statements sent to PostgreSQL as ONE statement (`WITH a AS (INSERT …),
 * b AS (INSERT …) SELECT …`): one round trip, and — sent outside a transaction — its own atomic
 * transaction, so no BEGIN and COMMIT round trips either. Every part selects FROM `gate` (a one-row
 * CTE, or none when the gate fails), so the whole statement writes everything or nothing; the answer
 * says whether the gate passed.
 */
export class WriteStatement {
  private readonly parts: RawBuilder<unknown>[] = [];
  private count = 0;
  /** The gate's name, to select FROM in each part (it has one row when the write may go ahead). */
  readonly gate: RawBuilder<unknown>;

  /** `gate`: a CTE body returning one row when the write may go ahead, none otherwise (default: always one). */
  constructor(gate: RawBuilder<unknown> = sql`SELECT 1 AS go`) {
    this.gate = this.add(gate);
  }

  /** Adds `body` (a SELECT, or an INSERT/UPDATE/DELETE joining `gate`) as a CTE; returns its name to select from. */
  add(body: RawBuilder<unknown>): RawBuilder<unknown> {
    const name = `w${this.count++}`;
    this.parts.push(sql`${sql.raw(name)} AS (${body})`);
    return sql.raw(name);
  }

  /** Runs it; true when the gate passed (every part wrote), false when it wrote nothing. */
  async execute(db: Executor): Promise<boolean> {
    const { rows } = await sql<{ passed: number }>`WITH ${sql.join(this.parts, sql`, `)} SELECT count(*)::int AS passed FROM ${this.gate}`.execute(db);
    return Number(rows[0]?.passed ?? 0) > 0;
  }
}
