/**
 * The scheduled refresh of formulas calling now() / today(): their materialized cells would otherwise
 * keep the time of the row's last write. Every hour on the hour in TIME_ZONE (so also at midnight,
 * when today() turns), each base with such a formula is recomputed in one write of its own through
 * the normal write path: changed cells become modify events (webhooks, rules, realtime see them).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Actor, BaseWriter } from './base-writer.js';
import { hasVolatileFormulas, refreshVolatileFormulas } from './formula-columns.js';
import { parseMetadata } from './metadata.js';

/** Who the refresh's events name: no user wrote them. */
export const FORMULA_REFRESH_ACTOR: Actor = { user: 'system', app: 'formula-refresh' };

export interface RefreshSummary {
  bases: number;
  rows: number;
  failed: number;
}

/** Recompute the now()/today() formulas of every base that has one; a failing base does not stop the others. */
export async function refreshVolatileFormulasEverywhere(db: Db, writer: BaseWriter): Promise<RefreshSummary> {
  // A cheap text filter first: only metadata naming now or today can hold such a formula.
  const candidates = await db
    .selectFrom('base_metadata')
    .innerJoin('bases', 'bases.id', 'base_metadata.base_id')
    .select(['bases.id as id', 'bases.uuid as uuid', 'base_metadata.data as data'])
    .where('bases.deleted_at', 'is', null)
    .where(sql<boolean>`(lower(cast(base_metadata.data as text)) like '%now%' or lower(cast(base_metadata.data as text)) like '%today%')`)
    .execute();
  const summary: RefreshSummary = { bases: 0, rows: 0, failed: 0 };
  for (const candidate of candidates) {
    if (!parseMetadata(String(candidate.data)).tables.some(hasVolatileFormulas)) continue;
    try {
      summary.rows += await writer.write({ id: candidate.id, uuid: candidate.uuid }, FORMULA_REFRESH_ACTOR, async (w) => {
        let rows = 0;
        for (const table of w.meta.tables) if (hasVolatileFormulas(table)) rows += await refreshVolatileFormulas(w, writer.timeZone, table);
        return rows;
      });
      summary.bases++;
    } catch {
      summary.failed++;
    }
  }
  return summary;
}

/** The scheduler's tick (croner pattern with seconds, evaluated in TIME_ZONE). */
export function volatileFormulaTick(db: Db, writer: BaseWriter) {
  return {
    name: 'formulas-now-today-refresh',
    pattern: '0 0 * * * *',
    leaseMs: 30 * 60_000,
    run: () => refreshVolatileFormulasEverywhere(db, writer),
  };
}
