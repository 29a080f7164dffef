import { parseFilters, type CompiledFilter } from '../filters/index.js';
import { columnByKey, columnByName, isDateColumn, tableById, viewById, type MetaColumn, type MetaDoc, type MetaTable, type MetaView } from './metadata-doc.js';
import type { Members, Rule } from './rules.model.js';
import { filterColumns } from './rules.validation.js';

/** A rule checked against its base and ready for the engine, with its filters compiled once. */
export interface PreparedRule {
  rule: Rule;
  table: MetaTable;
  view: MetaView;
  /** The view's filters; null when the view has none. */
  viewFilter: CompiledFilter | null;
  /** True when the view's own filters no longer parse: the rule then matches no row (it is not the rule's fault). */
  viewFilterBroken: boolean;
  /** The rule's own `filters` (filters_satisfy, rows_added); null when none. */
  ruleFilter: CompiledFilter | null;
  /** near_deadline only. */
  dateColumn: MetaColumn | null;
}

export type Preparation = { ok: true; prepared: PreparedRule } | { ok: false; reason: string };

/**
 * Whether a stored rule still fits its base; if not, why (the text its creator is told). These are the
 * invalidation reasons: table or view deleted, date column deleted or no longer a date, a column the
 * filters or `column_keys` use deleted, a listed user without access. Pure.
 */
export function prepareRule(rule: Rule, doc: MetaDoc, members: Members): Preparation {
  const t = rule.trigger;
  const table = tableById(doc, t.table_id);
  if (!table) return invalid(`its table ${t.table_id} was deleted`);
  const view = viewById(table, t.view_id);
  if (!view) return invalid(`its view ${t.view_id} of table ${table.name} was deleted`);

  let dateColumn: MetaColumn | null = null;
  if (t.condition === 'near_deadline') {
    const name = t.date_column_name ?? '';
    const column = columnByName(table, name);
    if (!column) return invalid(`its date column ${name} was deleted`);
    if (!isDateColumn(column)) return invalid(`its date column ${name} is no longer a date column`);
    dateColumn = column;
  } else {
    for (const key of t.column_keys ?? []) {
      if (!columnByKey(table, key)) return invalid(`the watched column ${key} was deleted`);
    }
  }

  let ruleFilter: CompiledFilter | null = null;
  if ((t.condition === 'filters_satisfy' || t.condition === 'rows_added') && (t.filters ?? []).length > 0) {
    const parsed = parseFilters({ filters: t.filters ?? [], filter_conjunction: t.filter_conjunction }, filterColumns(table));
    if (!parsed.ok) return invalid(`its filters no longer fit table ${table.name}: ${parsed.error}`);
    ruleFilter = parsed.filter;
  }

  for (const user of rule.action.users) {
    if (!members.has(user)) return invalid(`user ${user} no longer has access to the base`);
  }

  let viewFilter: CompiledFilter | null = null;
  let viewFilterBroken = false;
  if (Array.isArray(view.filters) && view.filters.length > 0) {
    const parsed = parseFilters({ filters: view.filters, filter_conjunction: view.filter_conjunction }, filterColumns(table));
    if (parsed.ok) viewFilter = parsed.filter;
    else viewFilterBroken = true;
  }
  return { ok: true, prepared: { rule, table, view, viewFilter, viewFilterBroken, ruleFilter, dateColumn } };
}

const invalid = (reason: string): Preparation => ({ ok: false, reason });
