import { badRequest } from '../../shared/errors.js';
import { coerceCell } from './cell-coercion.js';
import { selectOptions } from './column-types.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import { checkCell, checkRowKeys } from './size-limits.js';

/**
 * Turns written rows (`{"Column name": value}`) into stored cells for one table. Keys are column names;
 * a key that is no column name but a column key is accepted too; anything else is ignored (as the original).
 */
export class RowInput {
  private readonly byName = new Map<string, ColumnMeta>();
  private readonly byKey = new Map<string, ColumnMeta>();
  private readonly optionCounts: number[];

  constructor(private readonly table: TableMeta) {
    for (const column of table.columns) {
      this.byName.set(column.name, column);
      this.byKey.set(column.key, column);
    }
    this.optionCounts = table.columns.map((c) => selectOptions(c).length);
  }

  column(nameOrKey: string): ColumnMeta | undefined {
    return this.byName.get(nameOrKey) ?? this.byKey.get(nameOrKey);
  }

  /** Apply `input` onto `data` (mutated); `label` names the row in the 400 a bad value gets. */
  apply(data: Record<string, unknown>, input: Record<string, unknown>, label: string): void {
    checkRowKeys(input, this.table.columns.length, label);
    for (const [name, value] of Object.entries(input)) {
      const column = this.column(name);
      if (!column) continue;
      const result = coerceCell(column, value);
      switch (result.kind) {
        case 'set':
          checkCell(result.value, column.name, label);
          data[column.key] = result.value;
          break;
        case 'clear':
          delete data[column.key];
          break;
        case 'invalid':
          throw badRequest(`${label}: value of column ${column.name} (${column.type}) is invalid: ${result.reason}.`);
        case 'ignore':
          break;
      }
    }
  }

  /** New rows asked for `apply_default`: columns with a default value fill their empty cells with it. */
  applyDefaults(data: Record<string, unknown>, label: string): void {
    for (const column of this.table.columns) {
      const settings = column.data as { default_value?: unknown; enable_fill_default_value?: unknown } | null;
      if (!settings?.enable_fill_default_value || settings.default_value === undefined || data[column.key] !== undefined) continue;
      this.apply(data, { [column.key]: settings.default_value }, label);
    }
  }

  /** Number new rows' empty auto-number cells from the column's counter. True when a counter moved. */
  fillAutoNumbers(data: Record<string, unknown>, now: number): boolean {
    let moved = false;
    for (const column of this.table.columns) {
      if (column.type !== 'auto-number' || data[column.key] !== undefined) continue;
      data[column.key] = nextAutoNumber(column, now);
      moved = true;
    }
    return moved;
  }

  /** True when writing created select options (the metadata must be saved). */
  optionsAdded(): boolean {
    return this.table.columns.some((c, i) => selectOptions(c).length !== (this.optionCounts[i] ?? 0));
  }
}

/** The next value of an auto-number column: `prefix-` + zero-padded counter (date prefix `YYYYMMDD-`). */
export function nextAutoNumber(column: ColumnMeta, now: number): string {
  const data = (column.data ?? {}) as { digits?: number; prefix_type?: string; prefix?: string; max_used_auto_number?: number };
  const next = (data.max_used_auto_number ?? 0) + 1;
  column.data = { ...data, max_used_auto_number: next };
  const digits = String(next).padStart(data.digits ?? 4, '0');
  if (data.prefix_type === 'date') return `${new Date(now).toISOString().slice(0, 10).replace(/-/g, '')}-${digits}`;
  // The original joins a prefix with a dash: `row-0001`.
  return data.prefix ? `${data.prefix}-${digits}` : digits;
}
