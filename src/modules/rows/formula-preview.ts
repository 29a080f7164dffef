import { FormulaColumnError, FormulaPlan, formulaColumnData } from '../formulas/index.js';
import type { Db } from '../../db/index.js';
import { badRequest } from '../../shared/errors.js';
import type { BaseRef, BaseWriter } from './base-writer.js';
import { findTable, type ColumnMeta } from './metadata.js';
import { listRows } from './rows.repository.js';

type Body = Record<string, unknown>;

export const PREVIEW_MAX_ROWS = 20;
const PREVIEW_KEY = '\u0000preview';

/**
 * A formula tried on a table's first rows without changing anything (the console's formula builder):
 * the formula is checked exactly as a new formula column's would be (same errors, 400), then computed
 * for up to 20 rows in insertion order by the formulas module's own plan, each cell within its work budget.
 */
export class FormulaPreviewService {
  constructor(
    private readonly db: Db,
    private readonly writer: BaseWriter,
  ) {}

  async preview(base: BaseRef, body: Body) {
    const table = findTable(await this.writer.read(base), body);
    const limit = body.limit === undefined ? 5 : Number(body.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > PREVIEW_MAX_ROWS) throw badRequest(`limit invalid (1 to ${PREVIEW_MAX_ROWS}).`);
    const column: ColumnMeta = { key: PREVIEW_KEY, name: PREVIEW_KEY, type: 'formula', width: 200, editable: false, resizable: true, draggable: true, data: null };
    const withPreview = { ...table, columns: [...table.columns, column] };
    try {
      column.data = formulaColumnData(withPreview, column, { formula: body.formula });
    } catch (e) {
      if (e instanceof FormulaColumnError) throw badRequest(e.message);
      throw e;
    }
    const rows = await listRows(this.db, { baseId: base.id, tableId: table._id, orderBy: [], offset: 0, limit });
    const plan = FormulaPlan.of(withPreview)!;
    const ctx = { timeZone: this.writer.timeZone, now: this.writer.now() };
    return {
      result_type: column.data.result_type,
      rows: rows.map((row) => {
        const copy = { ...row, data: { ...row.data } };
        plan.apply(copy, ctx);
        return { _id: row._id, value: copy.data[PREVIEW_KEY] ?? null };
      }),
    };
  }
}
