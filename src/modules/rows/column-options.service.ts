import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { COLOR, OPTION_COLORS, selectOptions, type SelectOption } from './column-types.js';
import { findColumn, findTable, type ColumnMeta, type TableMeta } from './metadata.js';
import { randomAlnum } from './ids.js';
import { scanTable, updateRows } from './rows.repository.js';

type Body = Record<string, unknown>;

/** At most this many options per call (a column keeps its options in the metadata document). */
export const MAX_OPTIONS_PER_CALL = 1000;
const SELECT_TYPES = ['single-select', 'multiple-select'];

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function selectColumn(table: TableMeta, body: Body): ColumnMeta {
  const column = findColumn(table, body.column);
  if (!SELECT_TYPES.includes(column.type)) throw badRequest(`column ${column.name} is not a single or multiple select column.`);
  return column;
}

function optionList(body: Body, field: string): Body[] {
  const list = body[field];
  if (!Array.isArray(list) || list.length === 0 || !list.every(isObject)) throw badRequest(`${field} invalid.`);
  if (list.length > MAX_OPTIONS_PER_CALL) throw badRequest(`Number of options exceeds ${MAX_OPTIONS_PER_CALL}.`);
  return list;
}

function optionName(value: unknown, where: string): string {
  const name = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof name !== 'string' || name.trim() === '') throw badRequest(`${where}.name invalid.`);
  return name;
}

function optionColor(value: unknown, fallback: string, where: string): string {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string' || !COLOR.test(value)) throw badRequest(`${where} invalid.`);
  return value;
}

function newOptionId(taken: Set<string>): string {
  let id = randomAlnum(6, '0123456789');
  while (taken.has(id)) id = randomAlnum(6, '0123456789');
  taken.add(id);
  return id;
}

/**
 * `…/column-options/` (add, update, delete select options) and `…/column-cascade-settings/`.
 * Cells hold option names, so renaming or deleting an option rewrites the cells that name it.
 */
export class ColumnOptionsService {
  constructor(private readonly writer: BaseWriter) {}

  add(base: BaseRef, actor: Actor, body: Body) {
    const items = optionList(body, 'options');
    return this.writer.write(base, actor, async (w) => {
      const column = selectColumn(findTable(w.meta, body), body);
      const options = selectOptions(column);
      const names = new Set(options.map((o) => o.name));
      const ids = new Set(options.map((o) => o.id));
      const added: SelectOption[] = [];
      items.forEach((item, index) => {
        const where = `options.${index}`;
        const name = optionName(item.name, where);
        const palette = OPTION_COLORS[(options.length + added.length) % OPTION_COLORS.length]!;
        const color = optionColor(item.color, palette.color, `${where}.color`);
        const textColor = optionColor(item.textColor, palette.textColor, `${where}.textColor`);
        if (names.has(name)) return; // existing names are skipped, as the original does
        names.add(name);
        added.push({ id: newOptionId(ids), name, color, textColor });
      });
      if (added.length > 0) {
        column.data = { ...(column.data ?? {}), options: [...options, ...added] };
        w.metadataChanged('contents');
      }
      return { success: true as const };
    });
  }

  update(base: BaseRef, actor: Actor, body: Body) {
    const items = optionList(body, 'options');
    const returnOptions = body.return_options === true || body.return_options === 'true';
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const column = selectColumn(table, body);
      const options = selectOptions(column).map((o) => ({ ...o }));
      const renames = new Map<string, string>();
      const updated: SelectOption[] = [];
      items.forEach((item, index) => {
        const where = `options.${index}`;
        // By id (the documented request) or, failing that, by name (what the typed clients send).
        const target =
          (typeof item.id === 'string' ? options.find((o) => o.id === item.id) : undefined) ??
          (typeof item.name === 'string' ? options.find((o) => o.name === item.name) : undefined);
        if (!target) throw badRequest(`${where}: option ${String(item.id ?? item.name ?? '')} not found.`);
        if (item.name !== undefined && item.name !== target.name) {
          const name = optionName(item.name, where);
          if (options.some((o) => o !== target && o.name === name)) throw badRequest(`option ${name} exists.`);
          renames.set(target.name, name);
          target.name = name;
        }
        target.color = optionColor(item.color, target.color, `${where}.color`);
        target.textColor = optionColor(item.textColor, target.textColor, `${where}.textColor`);
        updated.push(target);
      });
      column.data = { ...(column.data ?? {}), options };
      w.metadataChanged('contents');
      if (renames.size > 0) await rewriteCells(w, table, column, (name) => renames.get(name) ?? name);
      return returnOptions ? { options: updated } : { success: true as const };
    });
  }

  remove(base: BaseRef, actor: Actor, body: Body) {
    const names = body.option_names;
    if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string')) throw badRequest('option_names invalid.');
    if (names.length > MAX_OPTIONS_PER_CALL) throw badRequest(`Number of options exceeds ${MAX_OPTIONS_PER_CALL}.`);
    const doomed = new Set(names as string[]);
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const column = selectColumn(table, body);
      const options = selectOptions(column);
      const kept = options.filter((o) => !doomed.has(o.name));
      if (kept.length !== options.length) {
        column.data = { ...(column.data ?? {}), options: kept };
        w.metadataChanged('contents');
        await rewriteCells(w, table, column, (name) => (doomed.has(name) ? null : name));
      }
      return { success: true as const };
    });
  }

  cascade(base: BaseRef, actor: Actor, body: Body) {
    const settings = body.cascade_settings;
    if (!isObject(settings)) throw badRequest('cascade_settings invalid.');
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const child = selectColumn(table, { column: body.child_column });
      const parent = selectColumn(table, { column: body.parent_column });
      if (child === parent) throw badRequest('child_column and parent_column must differ.');
      const parentNames = new Set(selectOptions(parent).map((o) => o.name));
      const childOptions = selectOptions(child);
      const childByName = new Map(childOptions.map((o) => [o.name, o.id]));
      const childIds = new Set(childOptions.map((o) => o.id));
      // Child options named here that the column lacks yet are created (the original accepts them; its SDK test relies on it).
      const created: SelectOption[] = [];
      // Stored as the original does: parent option id → child option ids, on the child column.
      const byId: Record<string, string[]> = {};
      for (const [parentName, childNames] of Object.entries(settings)) {
        const parentOption = selectOptions(parent).find((o) => o.name === parentName || o.id === parentName);
        if (!parentOption || !parentNames.has(parentOption.name)) throw badRequest(`cascade_settings: option ${parentName} of ${parent.name} not found.`);
        if (!Array.isArray(childNames) || !childNames.every((n) => typeof n === 'string')) throw badRequest(`cascade_settings.${parentName} invalid.`);
        byId[parentOption.id] = (childNames as string[]).map((name, index) => {
          const known = childByName.get(name) ?? (childIds.has(name) ? name : undefined);
          if (known !== undefined) return known;
          const optionLabel = optionName(name, `cascade_settings.${parentName}.${index}`);
          if (created.length >= MAX_OPTIONS_PER_CALL) throw badRequest(`Number of options exceeds ${MAX_OPTIONS_PER_CALL}.`);
          const palette = OPTION_COLORS[(childOptions.length + created.length) % OPTION_COLORS.length]!;
          const option = { id: newOptionId(childIds), name: optionLabel, color: palette.color, textColor: palette.textColor };
          created.push(option);
          childByName.set(optionLabel, option.id);
          return option.id;
        });
      }
      if (created.length > 0) child.data = { ...(child.data ?? {}), options: [...childOptions, ...created] };
      child.data = { ...(child.data ?? {}), cascade_column_key: parent.key, cascade_settings: byId };
      w.metadataChanged('structure');
      return { success: true as const };
    });
  }
}

/** Renames (or clears, for null) the option names stored in a select column's cells; no row events (a structural change). */
async function rewriteCells(w: WriteScope, table: TableMeta, column: ColumnMeta, rename: (name: string) => string | null): Promise<void> {
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const rows = [];
    for (const row of batch) {
      const cell = row.data[column.key];
      if (cell === undefined) continue;
      const next = Array.isArray(cell) ? cell.map((n) => rename(String(n))).filter((n): n is string => n !== null) : rename(String(cell));
      if (JSON.stringify(next) === JSON.stringify(cell)) continue;
      const data = { ...row.data };
      if (next === null || (Array.isArray(next) && next.length === 0)) delete data[column.key];
      else data[column.key] = next;
      rows.push({ rowId: row._id, data });
    }
    await updateRows(w.trx, w.dialect, w.base.id, rows, null);
  }
}
