import type { ChangeEvent, OpType } from '../events/index.js';
import { matchesRow, parseFilters, usedColumnKeys, type CompiledFilter, type FilterColumn, type StoredRow } from '../filters/index.js';
import { badRequest } from '../../shared/errors.js';

/**
 * What a subscriber (a webhook, a change-feed reader) wants to hear about, and the one place that
 * decides whether a committed change is for it. The spec is checked against the base's metadata once
 * (names → ids, filters parsed by the filter engine), stored resolved, and matched without I/O.
 */

export const ROW_OPS: readonly OpType[] = ['insert_row', 'modify_row', 'delete_row', 'add_link', 'remove_link'];
export const FIRE_ON = ['matching', 'starts_matching'] as const;
export type FireOn = (typeof FIRE_ON)[number];

/** The resolved subscription as stored (webhooks.subscription) and shown. */
export interface Subscription {
  /** Table ids; null = every table. */
  tables: string[] | null;
  /** Column keys per table id: fire only when one of them changed; null = any column. */
  columns: Record<string, string[]> | null;
  /** Operation types; null = every one. */
  events: OpType[] | null;
  /** Filters of the one table in `tables` (filtered-rows / notification-rule shape); null = none. */
  filters: unknown[] | null;
  filter_conjunction: 'And' | 'Or';
  /** The columns the filters use, as they were when saved (the filter engine needs their types). */
  filter_columns: FilterColumn[];
  /** `starts_matching`: only when the row did not match the filters before the change. */
  fire_on: FireOn;
}

/** The part of a base's metadata a subscription is checked against. */
export interface SubscriptionTable {
  _id: string;
  name: string;
  columns: Array<{ key: string; name: string; type: string; data: unknown }>;
}

export const SUBSCRIPTION_FIELDS = ['tables', 'columns', 'events', 'filters', 'filter_conjunction', 'fire_on'] as const;
const MAX_LIST = 200;

/** True when the body names any subscription field (an old client's body names none). */
export function mentionsSubscription(body: Record<string, unknown>): boolean {
  return SUBSCRIPTION_FIELDS.some((field) => body[field] !== undefined);
}

/**
 * Check a subscription given as JSON (or a form's JSON strings) against the base's tables; throws a
 * 400 naming the field. Tables and columns may be given by id/key or by name. Returns null when it
 * subscribes to everything (the stored form of "no filter").
 */
export function parseSubscription(body: Record<string, unknown>, tables: SubscriptionTable[]): Subscription | null {
  const tableList = list(body.tables, 'tables');
  const scope = tableList === null ? null : tableList.map((ref) => {
    const table = tables.find((t) => t._id === ref) ?? tables.find((t) => t.name === ref);
    if (!table) throw badRequest(`tables: table ${ref} not found`);
    return table;
  });
  const columnList = list(body.columns, 'columns');
  let columns: Record<string, string[]> | null = null;
  if (columnList !== null) {
    columns = {};
    for (const ref of columnList) {
      let found = false;
      for (const table of scope ?? tables) {
        const column = table.columns.find((c) => c.key === ref) ?? table.columns.find((c) => c.name === ref);
        if (!column) continue;
        found = true;
        (columns[table._id] ??= []).includes(column.key) || columns[table._id]!.push(column.key);
      }
      if (!found) throw badRequest(`columns: column ${ref} not found`);
    }
  }
  const eventList = list(body.events, 'events');
  if (eventList) for (const op of eventList) if (!ROW_OPS.includes(op as OpType)) throw badRequest(`events: ${op} is not one of ${ROW_OPS.join(', ')}`);
  const fireOn = body.fire_on === undefined || body.fire_on === null || body.fire_on === '' ? 'matching' : body.fire_on;
  if (!FIRE_ON.includes(fireOn as FireOn)) throw badRequest('fire_on must be matching or starts_matching');
  const filterList = jsonField(body.filters, 'filters');
  let filters: unknown[] | null = null;
  let filterColumns: FilterColumn[] = [];
  let conjunction: 'And' | 'Or' = 'And';
  if (filterList !== undefined && filterList !== null) {
    if (!Array.isArray(filterList)) throw badRequest('filters must be a list');
    if (filterList.length > 0) {
      if (!scope || scope.length !== 1) throw badRequest('filters need exactly one table in tables');
      const table = scope[0]!;
      const all = table.columns.map((c) => ({ key: c.key, name: c.name, type: c.type, data: c.data }));
      const parsed = parseFilters({ filters: filterList, filter_conjunction: body.filter_conjunction ?? 'And' }, all);
      if (!parsed.ok) throw badRequest(parsed.error);
      const used = new Set(usedColumnKeys(parsed.filter));
      filters = filterList;
      filterColumns = all.filter((c) => used.has(c.key));
      conjunction = String(body.filter_conjunction ?? 'And').toLowerCase() === 'or' ? 'Or' : 'And';
    }
  }
  if (fireOn === 'starts_matching' && filters === null) throw badRequest('fire_on starts_matching needs filters');
  const spec: Subscription = {
    tables: scope ? scope.map((t) => t._id) : null,
    columns,
    events: eventList as OpType[] | null,
    filters,
    filter_conjunction: conjunction,
    filter_columns: filterColumns,
    fire_on: fireOn as FireOn,
  };
  return spec.tables === null && spec.columns === null && spec.events === null && spec.filters === null ? null : spec;
}

/** A list of strings given as a JSON array or (forms) a JSON text or comma-separated text; null/'' = not given. */
function list(value: unknown, field: string): string[] | null {
  const parsed = jsonField(value, field, true);
  if (parsed === undefined || parsed === null) return null;
  if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== 'string' || v.length > 255)) throw badRequest(`${field} must be a list of names or ids`);
  if (parsed.length > MAX_LIST) throw badRequest(`${field} may have at most ${MAX_LIST} entries`);
  return parsed.length === 0 ? null : (parsed as string[]);
}

function jsonField(value: unknown, field: string, commaList = false): unknown {
  if (value === undefined || value === null || value === '') return value === '' ? null : value;
  if (typeof value !== 'string') return value;
  if (value.length > 100_000) throw badRequest(`${field} is too long`);
  const text = value.trim();
  if (text.startsWith('[') || text.startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw badRequest(`${field} is not valid JSON`);
    }
  }
  if (commaList) return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  throw badRequest(`${field} must be a list`);
}

/** A stored subscription ready to match: its filters parsed once. */
export interface CompiledSubscription {
  spec: Subscription | null;
  filter: CompiledFilter | null;
}

export function compileSubscription(spec: Subscription | null): CompiledSubscription {
  if (!spec?.filters) return { spec, filter: null };
  const parsed = parseFilters({ filters: spec.filters, filter_conjunction: spec.filter_conjunction }, spec.filter_columns);
  // A filter that no longer parses (cannot happen for a spec saved by parseSubscription) matches nothing.
  return { spec, filter: parsed.ok ? parsed.filter : null };
}

/** The subscription as the API shows it and takes it back (columns as keys, tables as ids). */
export function presentSubscription(spec: Subscription) {
  const columns = spec.columns === null ? null : [...new Set(Object.values(spec.columns).flat())];
  return { tables: spec.tables, columns, events: spec.events, filters: spec.filters, filter_conjunction: spec.filter_conjunction, fire_on: spec.fire_on };
}

/** Stored text → spec; anything unreadable reads as "everything" (null). */
export function readSubscription(text: string | null | undefined): Subscription | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Subscription;
  } catch {
    return null;
  }
}

export type MatchReason =
  | 'matched'
  | 'other_table'
  | 'event_not_subscribed'
  | 'no_watched_column_changed'
  | 'filters_not_met'
  | 'already_matched_before';

export interface MatchResult {
  match: boolean;
  reason: MatchReason;
}

/**
 * Whether `event` is for this subscription. Columns: a modification or link change must touch a
 * listed column of its table (inserts and deletes change every cell). Filters: on the row after the
 * change (a delete: on the deleted row); `starts_matching` also needs the row before not to match.
 */
export function matchChange(sub: CompiledSubscription, event: ChangeEvent, timeZone: string): MatchResult {
  const spec = sub.spec;
  if (!spec) return ok;
  if (spec.tables && !spec.tables.includes(event.tableId)) return no('other_table');
  if (spec.events && !spec.events.includes(event.opType)) return no('event_not_subscribed');
  if (spec.columns && event.opType !== 'insert_row' && event.opType !== 'delete_row') {
    const keys = spec.columns[event.tableId] ?? [];
    if (!event.rowData.some((cell) => keys.includes(cell.column_key))) return no('no_watched_column_changed');
  }
  if (spec.filters) {
    if (!sub.filter) return no('filters_not_met');
    const ctx = { now: event.opTime, timeZone, currentUser: event.opUser };
    const after = rowAfter(event);
    if (!matchesRow(sub.filter, after, ctx)) return no('filters_not_met');
    if (spec.fire_on === 'starts_matching') {
      if (event.opType === 'delete_row') return no('already_matched_before');
      if (event.opType !== 'insert_row' && matchesRow(sub.filter, rowBefore(event, after), ctx)) return no('already_matched_before');
    }
  }
  return ok;
}

const ok: MatchResult = { match: true, reason: 'matched' };
const no = (reason: MatchReason): MatchResult => ({ match: false, reason });

/** The row after the change as the filter engine reads it; a delete's deleted row (its old values). */
function rowAfter(event: ChangeEvent): StoredRow {
  const source = event.row ?? Object.fromEntries(event.rowData.map((cell) => [cell.column_key, cell.old_value]));
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (!key.startsWith('_')) data[key] = value;
  const text = (v: unknown) => (typeof v === 'string' ? v : event.opUser);
  const time = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && Number.isFinite(Date.parse(v)) ? Date.parse(v) : event.opTime);
  return { _id: event.rowId, _ctime: time(source._ctime), _mtime: time(source._mtime), _creator: text(source._creator), _last_modifier: text(source._last_modifier), data };
}

/** The row before a modification: the row after with each changed cell's old value. */
function rowBefore(event: ChangeEvent, after: StoredRow): StoredRow {
  const data = { ...after.data };
  for (const cell of event.rowData) {
    if (cell.old_value === null || cell.old_value === undefined) delete data[cell.column_key];
    else data[cell.column_key] = cell.old_value;
  }
  return { ...after, data };
}

export const MATCH_MESSAGES: Record<MatchReason, string> = {
  matched: 'The change matches the subscription.',
  other_table: 'The change is in a table the webhook does not listen to.',
  event_not_subscribed: 'The webhook does not listen to this kind of change.',
  no_watched_column_changed: 'None of the columns the webhook watches changed.',
  filters_not_met: 'The row does not match the filters after the change.',
  already_matched_before: 'The row matched the filters before the change already (fire_on: starts_matching).',
};
