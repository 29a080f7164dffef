import { randomUUID } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type QueryResult } from 'kysely';
import { outsideCommitScope, type Db, type WriteStatement } from '../../db/index.js';
import { fieldsDigest, rowHash, type EntryFields } from './chain.js';

/** Runs one statement in the transaction the row is written in. */
export type RunInTx = (query: CompiledQuery) => Promise<QueryResult<unknown>>;

interface Head {
  seq: number;
  hash: string;
}

// SQLite: the row goes straight into the chain (one writer at a time holds the database's write lock).
const HEAD_IF = 'update "audit_head" set "seq" = ?, "hash" = ? where "id" = 1 and "seq" = ? and "hash" = ?';
const HEAD_READ = 'select "seq", "hash" from "audit_head" where "id" = 1';
const HEAD_SET = 'update "audit_head" set "seq" = ?, "hash" = ? where "id" = 1';
const CHAIN_INSERT =
  'insert into "audit_log" ("seq", "created_at", "action", "actor", "ip", "base_id", "target", "detail", "digest", "prev_hash", "hash") values (?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?)';
// PostgreSQL: one statement counts the append in this instance's writer row and appends the pending row.
// (INSERT … SELECT FROM "w": the row's id is drawn once the writer row is locked, so a writer's ids
// follow its counts, and the sealer, which takes rows by id, meets them in order.)
const PENDING_INSERT = `with "w" as (
  insert into "audit_writers" ("id", "appended", "sealed") values ($9, 1, 0)
  on conflict ("id") do update set "appended" = "audit_writers"."appended" + 1 returning "appended")
insert into "audit_pending" ("created_at", "action", "actor", "ip", "base_id", "target", "detail", "digest", "writer", "writer_seq")
select $1::bigint, $2, $3, $4, $5::bigint, $6, $7, $8, $9, "appended" from "w"`;

/**
 * Writes an audited action's row inside the action's transaction, so the two commit together.
 * - SQLite: straight into the hash chain. The transaction holds the database's write lock (BEGIN
 *   IMMEDIATE), so the chain's head cannot move under it; the head is remembered between appends and
 *   taken with a conditional UPDATE (two statements), read again only when another writer (the sealer,
 *   another process, a rolled-back append) moved it.
 * - PostgreSQL: into `audit_pending`, one statement that also counts the append in this instance's
 *   `audit_writers` row (its row lock is held only from the append to the COMMIT just after it). The
 *   count makes a pending row deleted before it is sealed show as a gap (sealer.ts, verify).
 */
export class AuditAppender {
  /** True on SQLite: rows are chained as they are appended, nothing is left pending. */
  readonly chainsAtAppend: boolean;
  /** This instance's id among the writers of `audit_pending`. */
  readonly writer = randomUUID();
  private head: Head | undefined;

  constructor(private readonly db: Db) {
    this.chainsAtAppend = !(db.getExecutor().adapter instanceof PostgresAdapter);
  }

  /** Appends the row inside the caller's transaction (`run`). */
  async append(run: RunInTx, fields: EntryFields): Promise<void> {
    if (this.chainsAtAppend) await this.chain(run, fields);
    else await run(CompiledQuery.raw(PENDING_INSERT, [...entryValues(fields), fieldsDigest(fields), this.writer]));
  }

  /**
   * PostgreSQL: the row as two parts of a write sent as one statement, under its gate (written only
   * when the write is): the count in this instance's writer row, and the pending row stamped with it,
   * as PENDING_INSERT does in a transaction. One such row per statement (the writer row may be
   * updated once in a statement).
   */
  appendTo(statement: WriteStatement, fields: EntryFields): void {
    if (this.chainsAtAppend) throw new Error('AuditAppender.appendTo: SQLite chains at append, in a transaction');
    const counted = statement.add(sql`
      INSERT INTO audit_writers (id, appended, sealed) SELECT CAST(${this.writer} AS text), 1, 0 FROM ${statement.gate}
      ON CONFLICT (id) DO UPDATE SET appended = audit_writers.appended + 1 RETURNING appended`);
    statement.add(sql`
      INSERT INTO audit_pending (created_at, action, actor, ip, base_id, target, detail, digest, writer, writer_seq)
      SELECT CAST(${fields.created_at} AS bigint), CAST(${fields.action} AS text), CAST(${fields.actor} AS text), CAST(${fields.ip} AS text),
             CAST(${fields.base_id} AS bigint), CAST(${fields.target} AS text), CAST(${fields.detail} AS text), CAST(${fieldsDigest(fields)} AS text),
             CAST(${this.writer} AS text), appended
        FROM ${counted}`);
  }

  /** Appends the row as a change of its own (an action that wrote nothing else: a sign-in, an export). */
  appendAlone(fields: EntryFields): Promise<void> {
    // Outside any request's commit scope: this transaction must not carry another row.
    return outsideCommitScope(async () => {
      if (!this.chainsAtAppend) await this.append((query) => this.db.executeQuery(query), fields);
      else await this.db.transaction().execute((trx) => this.append((query) => trx.executeQuery(query), fields));
    });
  }

  private async chain(run: RunInTx, fields: EntryFields): Promise<void> {
    let prev = this.head;
    let next = prev && link(prev, fields);
    const taken = prev && next && (await run(CompiledQuery.raw(HEAD_IF, [next.seq, next.hash, prev.seq, prev.hash]))).numAffectedRows === BigInt(1);
    if (!taken) {
      const read = (await run(CompiledQuery.raw(HEAD_READ))).rows[0] as Head | undefined;
      if (!read) throw new Error('audit_head is missing');
      prev = { seq: Number(read.seq), hash: read.hash };
      next = link(prev, fields);
      await run(CompiledQuery.raw(HEAD_SET, [next.seq, next.hash]));
    }
    await run(CompiledQuery.raw(CHAIN_INSERT, [next!.seq, ...entryValues(fields), prev!.hash, next!.hash]));
    // Only a guess for the next append (this transaction may still roll back): HEAD_IF checks it.
    this.head = next;
  }
}

function link(prev: Head, fields: EntryFields): Head {
  const seq = prev.seq + 1;
  return { seq, hash: rowHash(prev.hash, { seq, ...fields }) };
}

function entryValues(fields: EntryFields): unknown[] {
  return [fields.created_at, fields.action, fields.actor, fields.ip, fields.base_id, fields.target, fields.detail];
}
