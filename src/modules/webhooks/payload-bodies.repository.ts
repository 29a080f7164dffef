import type { Executor } from '../../db/index.js';

/** Put the shared body into deliveries that reference one (rows are changed in place). */
export async function resolveBodies<T extends { body: string; payload_id?: number | null }>(db: Executor, rows: T[]): Promise<T[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.payload_id == null ? [] : [Number(r.payload_id)])))];
  if (ids.length === 0) return rows;
  const payloads = await db.selectFrom('webhook_payloads').select(['id', 'body']).where('id', 'in', ids).execute();
  const bodies = new Map(payloads.map((p) => [Number(p.id), p.body]));
  for (const row of rows) if (row.payload_id != null) row.body = bodies.get(Number(row.payload_id)) ?? row.body;
  return rows;
}
