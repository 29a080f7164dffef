import type { TokenScope } from '../access/index.js';
import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter } from './base-writer.js';
import { newView } from './default-metadata.js';
import { compileFilter } from './filter-adapter.js';
import { newShortId } from './ids.js';
import { findTable, findView, lookupColumn, type TableMeta, type ViewMeta, type ViewSort } from './metadata.js';
import { presentView } from './structure.present.js';
import { metadataForScope } from './scope-metadata.js';
import { filtersByKey } from './structure.js';
import { checkViewFilters } from './column-data-schema.js';
import { applyColumnLayout } from './view-columns.js';

type Body = Record<string, unknown>;

const MAX_VIEW_NAME_LENGTH = 255;

/**
 * How the console shows a view: `{type, column_key?}` (the kanban's single select, the calendar's
 * date). Not in the original, whose views carry no such field; its clients ignore an extra key.
 */
const VIEW_LAYOUTS = ['grid', 'kanban', 'gallery', 'calendar', 'form'];

function checkViewName(value: unknown): string {
  if (typeof value !== 'string') throw badRequest('name invalid.');
  const name = value.trim();
  if (name === '' || [...name].length > MAX_VIEW_NAME_LENGTH) throw badRequest('name invalid.');
  return name;
}

/** Views: list, create, get, update (filters, sorts, hidden columns…), delete. */
export class ViewsService {
  constructor(private readonly writer: BaseWriter) {}

  /** `scope`: a view share's token sees its one view only, a table-scoped token nothing beyond its scope (scope-metadata.ts). */
  async list(base: BaseRef, query: Body, scope?: TokenScope | null) {
    const table = findTable(await this.read(base, scope), query);
    return { views: table.views.map(presentView) };
  }

  async get(base: BaseRef, viewName: string, query: Body, scope?: TokenScope | null) {
    const table = findTable(await this.read(base, scope), query);
    return presentView(findView(table, viewName));
  }

  private async read(base: BaseRef, scope: TokenScope | null | undefined) {
    return metadataForScope(await this.writer.read(base), scope);
  }

  create(base: BaseRef, actor: Actor, query: Body, body: Body) {
    const name = checkViewName(body.name);
    const type = body.type === undefined || body.type === '' ? 'table' : body.type;
    if (type !== 'table' && type !== 'archive') throw badRequest('type invalid.');
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, { ...body, ...query });
      if (table.views.some((v) => v.name === name)) throw badRequest(`View ${name} exists.`);
      const view = newView(newShortId(table.views.map((v) => v._id)), name, type);
      // A new view may come with its filters, sorts, groupings and hidden columns.
      applyViewChanges(table, view, body);
      table.views.push(view);
      w.metadataChanged();
      return presentView(view);
    });
  }

  update(base: BaseRef, actor: Actor, viewName: string, query: Body, body: Body) {
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, { ...body, ...query });
      const view = findView(table, viewName);
      applyViewChanges(table, view, body);
      w.metadataChanged();
      return presentView(view);
    });
  }

  async remove(base: BaseRef, actor: Actor, viewName: string, query: Body) {
    await this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, query);
      const view = findView(table, viewName);
      if (table.views.length === 1) throw badRequest('The last view of a table cannot be deleted.');
      table.views = table.views.filter((v) => v !== view);
      w.metadataChanged();
    });
    return { success: true as const };
  }
}

function toBool(value: unknown, field: string): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw badRequest(`${field} invalid.`);
}

/** Validate and apply the fields of `PUT views/{name}/`; absent fields stay as they are. */
function applyViewChanges(table: TableMeta, view: ViewMeta, body: Body): void {
  if (body.name !== undefined) {
    const name = checkViewName(body.name);
    if (name !== view.name && table.views.some((v) => v.name === name)) throw badRequest(`View ${name} exists.`);
    view.name = name;
  }
  if (body.is_locked !== undefined) view.is_locked = toBool(body.is_locked, 'is_locked');
  const conjunction = body.filter_conjunction ?? view.filter_conjunction;
  if (conjunction !== 'And' && conjunction !== 'Or') throw badRequest('filter_conjunction invalid');
  if (body.filters !== undefined) {
    if (!Array.isArray(body.filters)) throw badRequest('filters invalid');
    const filters = checkViewFilters(body.filters.filter((f) => !(typeof f === 'object' && f !== null && Object.keys(f).length === 0)));
    compileFilter(table, { filters, filter_conjunction: conjunction });
    view.filters = filtersByKey(filters, table);
  }
  view.filter_conjunction = conjunction;
  if (body.sorts !== undefined) view.sorts = columnRefs(table, body.sorts, 'sorts') as ViewSort[];
  if (body.groupbys !== undefined) view.groupbys = columnRefs(table, body.groupbys, 'groupbys');
  if (body.hidden_columns !== undefined) {
    if (!Array.isArray(body.hidden_columns)) throw badRequest('hidden_columns invalid.');
    view.hidden_columns = [
      ...new Set(
        body.hidden_columns.map((ref) => {
          const column = typeof ref === 'string' ? lookupColumn(table, ref) : undefined;
          if (!column) throw badRequest(`hidden_columns: column ${String(ref)} not found.`);
          return column.key;
        }),
      ),
    ];
  }
  if (body.layout !== undefined) {
    if (body.layout === null) delete view.layout;
    else view.layout = checkLayout(table, body.layout);
  }
  applyColumnLayout(table, view, body);
}

/** `layout`: `{type: grid|kanban|gallery|calendar|form, column_key?: <column key or name>}`, nothing else. */
function checkLayout(table: TableMeta, raw: unknown): { type: string; column_key?: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('layout invalid.');
  const entry = raw as Record<string, unknown>;
  if (Object.keys(entry).some((k) => k !== 'type' && k !== 'column_key')) throw badRequest('layout invalid.');
  if (typeof entry.type !== 'string' || !VIEW_LAYOUTS.includes(entry.type)) throw badRequest('layout.type invalid.');
  if (entry.column_key === undefined || entry.column_key === null) return { type: entry.type };
  const column = typeof entry.column_key === 'string' ? lookupColumn(table, entry.column_key) : undefined;
  if (!column) throw badRequest(`layout: column ${String(entry.column_key)} not found.`);
  return { type: entry.type, column_key: column.key };
}

/** Sorts / group-bys: `[{column_key | column_name, sort_type: up|down}]`; `{}` items are dropped (the documented way to clear). */
function columnRefs(table: TableMeta, raw: unknown, field: string): Array<{ column_key: string; sort_type: 'up' | 'down' }> {
  if (!Array.isArray(raw)) throw badRequest(`${field} invalid.`);
  const out: Array<{ column_key: string; sort_type: 'up' | 'down' }> = [];
  raw.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw badRequest(`${field}.${i} invalid.`);
    const entry = item as Record<string, unknown>;
    if (Object.keys(entry).length === 0) return;
    const ref = entry.column_key ?? entry.column_name;
    const column = typeof ref === 'string' ? lookupColumn(table, ref) : undefined;
    if (!column) throw badRequest(`${field}.${i}: column ${String(ref)} not found.`);
    const sortType = entry.sort_type ?? 'up';
    if (sortType !== 'up' && sortType !== 'down') throw badRequest(`${field}.${i}.sort_type invalid.`);
    out.push({ column_key: column.key, sort_type: sortType });
  });
  return out;
}
