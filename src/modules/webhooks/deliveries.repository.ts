import { sql, type Insertable, type Selectable } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import type { DeliveryStatus, WebhookAttemptsTable, WebhookDeliveriesTable } from './webhooks.table.js';
import { claimDeliveries, type ClaimedDelivery, type ClaimInput } from './claim.repository.js';
import { resolveBodies } from './payload-bodies.repository.js';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
export type NewDelivery = Insertable<WebhookDeliveriesTable>;

const INSERT_CHUNK = 200;

/**
 * Queue deliveries; one whose dedupe_key already exists is skipped (events replayed after a crash).
 * Returns the id of each inserted delivery by its dedupe_key (skipped ones are absent).
 */
export async function insertDeliveries(db: Executor, rows: NewDelivery[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const inserted = await db
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning(['id', 'dedupe_key'])
      .execute();
    for (const row of inserted) if (row.dedupe_key !== null) ids.set(row.dedupe_key, Number(row.id));
  }
  return ids;
}

/**
 * Store each event's body once; returns the payload id per event id. A replayed event keeps its row.
 */
export async function insertPayloads(db: Executor, payloads: Array<{ eventId: number; body: string }>, now: number): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  for (let i = 0; i < payloads.length; i += INSERT_CHUNK) {
    const rows = await db
      .insertInto('webhook_payloads')
      .values(payloads.slice(i, i + INSERT_CHUNK).map((p) => ({ event_id: p.eventId, body: p.body, created_at: now })))
      .onConflict((oc) => oc.column('event_id').doUpdateSet((eb) => ({ body: eb.ref('excluded.body') })))
      .returning(['id', 'event_id'])
      .execute();
    for (const r of rows) ids.set(Number(r.event_id), Number(r.id));
  }
  return ids;
}

/** What tells queued deliveries apart; the rest of a new one is the same for all. */
export type QueuedDeliveryFields = Pick<
  NewDelivery,
  'webhook_id' | 'base_id' | 'event_id' | 'dedupe_key' | 'msg_id' | 'kind' | 'op_type' | 'body' | 'redelivery_of' | 'row_key' | 'payload_id'
>;

/** A delivery queued at `now`, due at once, never tried. */
export function queuedDelivery(fields: QueuedDeliveryFields, now: number): NewDelivery {
  return {
    ...fields,
    status: 'pending',
    next_attempt_at: now,
    locked_until: null,
    claim_token: null,
    last_status_code: null,
    last_error: null,
    created_at: now,
    completed_at: null,
  };
}

export async function insertDelivery(db: Executor, row: NewDelivery): Promise<number> {
  const { id } = await db.insertInto('webhook_deliveries').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export type { ClaimedDelivery } from './claim.repository.js';

/** Claim due deliveries as leases: per-row order, lanes, round-robin fairness (see claim.repository.ts). SQLite: pass a transaction. */
export function claimDue(db: Executor, dialect: DialectName, input: ClaimInput): Promise<ClaimedDelivery[]> {
  return claimDeliveries(db, input, dialect);
}

export interface AttemptRecord {
  deliveryId: number;
  claimToken: string;
  attempt: number;
  status: DeliveryStatus;
  nextAttemptAt: number;
  completedAt: number | null;
  statusCode: number | null;
  error: string | null;
}

/**
 * Store the outcome of a claimed attempt, release the lease and log the attempt; false (and nothing
 * written) when the lease was lost. PostgreSQL: one statement. SQLite: two, so pass a transaction.
 */
export async function finishAttempt(
  db: Executor,
  dialect: DialectName,
  record: AttemptRecord,
  attempt: Insertable<WebhookAttemptsTable>,
): Promise<boolean> {
  if (dialect === 'postgres') {
    const result = await sql`
      WITH done AS (
        UPDATE webhook_deliveries
           SET status = ${record.status}, attempts = ${record.attempt}, next_attempt_at = ${record.nextAttemptAt},
               completed_at = ${record.completedAt}, last_status_code = ${record.statusCode}, last_error = ${record.error},
               locked_until = NULL, claim_token = NULL, lease_owner = NULL
         WHERE id = ${record.deliveryId} AND claim_token = ${record.claimToken}
        RETURNING id)
      INSERT INTO webhook_attempts
        (delivery_id, attempt, started_at, duration_ms, url, status_code, error, response_excerpt, outcome, next_attempt_at)
      SELECT id, CAST(${attempt.attempt} AS integer), CAST(${attempt.started_at} AS bigint), CAST(${attempt.duration_ms} AS integer),
             CAST(${attempt.url} AS varchar), CAST(${attempt.status_code ?? null} AS integer), CAST(${attempt.error ?? null} AS text),
             CAST(${attempt.response_excerpt ?? null} AS text), CAST(${attempt.outcome} AS varchar),
             CAST(${attempt.next_attempt_at ?? null} AS bigint)
        FROM done`.execute(db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: record.status,
      attempts: record.attempt,
      next_attempt_at: record.nextAttemptAt,
      completed_at: record.completedAt,
      last_status_code: record.statusCode,
      last_error: record.error,
      locked_until: null,
      claim_token: null,
      lease_owner: null,
    })
    .where('id', '=', record.deliveryId)
    .where('claim_token', '=', record.claimToken)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await insertAttempt(db, attempt);
  return true;
}

/**
 * Store the outcomes of many claimed attempts at once (the batched recorder): deliveries with the same
 * new state share one `UPDATE … WHERE id IN (…) AND claim_token = …`, and the attempts of the
 * deliveries whose lease was still held go into the log in multi-row inserts. Returns the ids that
 * were written; the others had lost their lease and got nothing. Pass a transaction.
 */
export async function finishAttempts(
  db: Executor,
  items: Array<{ record: AttemptRecord; attempt: Insertable<WebhookAttemptsTable> }>,
): Promise<Set<number>> {
  const groups = new Map<string, AttemptRecord[]>();
  for (const { record } of items) {
    const key = JSON.stringify([record.claimToken, record.attempt, record.status, record.nextAttemptAt, record.completedAt, record.statusCode, record.error]);
    const group = groups.get(key);
    if (group) group.push(record);
    else groups.set(key, [record]);
  }
  const written = new Set<number>();
  for (const records of groups.values()) {
    const first = records[0]!;
    for (let i = 0; i < records.length; i += INSERT_CHUNK) {
      const rows = await db
        .updateTable('webhook_deliveries')
        .set({
          status: first.status,
          attempts: first.attempt,
          next_attempt_at: first.nextAttemptAt,
          completed_at: first.completedAt,
          last_status_code: first.statusCode,
          last_error: first.error,
          locked_until: null,
          claim_token: null,
          lease_owner: null,
        })
        .where('id', 'in', records.slice(i, i + INSERT_CHUNK).map((r) => r.deliveryId))
        .where('claim_token', '=', first.claimToken)
        .returning('id')
        .execute();
      for (const row of rows) written.add(Number(row.id));
    }
  }
  const log = items.filter((item) => written.has(item.record.deliveryId)).map((item) => item.attempt);
  for (let i = 0; i < log.length; i += INSERT_CHUNK) await db.insertInto('webhook_attempts').values(log.slice(i, i + INSERT_CHUNK)).execute();
  return written;
}

export async function insertAttempt(db: Executor, row: Insertable<WebhookAttemptsTable>): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute();
}

/** When the earliest claimable head becomes due (null when nothing is queued): the worker's sleep. */
export async function nextDueAt(db: Executor): Promise<number | null> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    // A paced webhook's delivery is due no sooner than its bucket allows (else the loop would spin).
    .select(sql<number | null>`MIN(CASE WHEN w.paced_until > COALESCE(d.locked_until, d.next_attempt_at) THEN w.paced_until
                                    ELSE COALESCE(d.locked_until, d.next_attempt_at) END)`.as('due'))
    .where('d.status', '=', 'pending')
    .where('w.is_valid', '=', 1)
    .executeTakeFirst();
  return row?.due === null || row?.due === undefined ? null : Number(row.due);
}

export async function listDeliveries(
  db: Executor,
  webhookId: number,
  offset: number,
  limit: number,
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute()
    .then((found) => resolveBodies(db, found));
  const count = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_id', '=', webhookId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

export function attemptsOf(db: Executor, deliveryIds: number[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('id').execute();
}

export async function findDelivery(db: Executor, webhookId: number, id: number): Promise<DeliveryRow | undefined> {
  const row = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
  return row ? (await resolveBodies(db, [row]))[0] : undefined;
}

/** Deliveries by id, in id order (a shared body stays referenced by `payload_id`). */
export async function deliveriesById(db: Executor, ids: number[]): Promise<DeliveryRow[]> {
  const out: DeliveryRow[] = [];
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    const rows = await db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids.slice(i, i + INSERT_CHUNK)).orderBy('id').execute();
    out.push(...rows);
  }
  return out;
}

/** The (first) delivery of a change event to a webhook, if one was queued. */
export function deliveryOfEvent(db: Executor, webhookId: number, eventId: number): Promise<{ id: number; status: string } | undefined> {
  return db.selectFrom('webhook_deliveries').select(['id', 'status']).where('webhook_id', '=', webhookId).where('event_id', '=', eventId).orderBy('id').executeTakeFirst();
}

/** Delete finished deliveries (and their attempts) completed before `before`, in batches. */
export async function pruneFinished(db: Executor, before: number, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', 'in', ['succeeded', 'failed'])
      .where('completed_at', '<', before)
      .limit(batch)
      .execute();
    if (ids.length === 0) return total + (await prunePayloads(db, before));
    const list = ids.map((r) => Number(r.id));
    await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', list).execute();
    await db.deleteFrom('webhook_deliveries').where('id', 'in', list).execute();
    total += list.length;
    if (ids.length < batch) return total + (await prunePayloads(db, before));
  }
}

/** Delete shared bodies older than `before` that no delivery references any more (not counted as deliveries). */
async function prunePayloads(db: Executor, before: number): Promise<number> {
  await db
    .deleteFrom('webhook_payloads')
    .where('created_at', '<', before)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.payload_id', '=', 'webhook_payloads.id'))))
    .execute();
  return 0;
}
