import { useCallback, useEffect, useMemo, useRef, useState, type ClipboardEvent, type KeyboardEvent, type ReactNode, type RefObject } from 'react';
import { useInfiniteQuery, useQuery, useQueryClient, type InfiniteData } from '@tanstack/react-query';
import DataGrid, { type DataGridHandle, type RowsChangeData } from 'react-data-grid';
import { SelectColumn } from './select-column';
import { ConfirmButton, Empty, ErrorText, Loading, useAction } from '../ui';
import { gateway, q, slimRow, useMetadata, type BaseAccess, type WorkspaceRef } from './base';
import { gridColumns } from './cells';
import { ColumnsPanel } from './ColumnsPanel';
import { ViewPanel } from './ViewPanel';
import { CommentsPanel } from './CommentsPanel';
import { useRelatedUsers } from './people';
import { canEditBase } from './permission';
import { HideColumnsPanel } from './HideColumnsPanel';
import { useSearch } from './search';
import { useUndo, type Change, type Part, type RowWrites } from './undo';
import { operationRestore } from './operation-restore';
import { ApiError } from '../api';
import { RowForm } from './RowForm';
import { copyText, parseBlock, pastedValue } from './clipboard';
import { GroupPanel } from './GroupPanel';
import { groupedColumns, groupRows, isGroupRow } from './group';
import { draggableHeaders, moveTarget, movedOrder, useWidthSaver, viewColumns } from './column-layout';
import { bounds, rangeSize, rangeStyle, rangeText, type CellPos } from './range';
import { useRangeSelection } from './use-range';
import { LAYOUTS, layoutColumns, useLayout, type LayoutKind } from './layouts/layout';
import { KanbanView } from './layouts/KanbanView';
import { GalleryView } from './layouts/GalleryView';
import { CalendarView } from './layouts/CalendarView';
import { FormView } from './layouts/FormView';
import { TransferPanel } from './TransferPanel';
import { gridRowHeightStyle, ROW_HEIGHT } from './row-height';
import type { Row, Table } from '../types';
import { t } from '../i18n';

const PAGE = 1000;
/** The API's most rows per update or append request. */
const WRITE_BATCH = 1000;
type RowPages = InfiniteData<{ rows: Row[]; start: number }>;
const rowKey = (r: Row) => r._id;

export interface BaseEditorProps {
  access: BaseAccess;
  title: string;
  tableId?: string;
  rowId?: string;
  /** The link of a table's tab. */
  tableHref: (tableId: string) => string;
  /** Shown beside the title: links to sharing and integrations, the live status. */
  head?: ReactNode;
  /** Row comments need an account (not offered on an external link). */
  comments?: boolean;
  /** The base's workspace and name, for import and export (account routes; not on an external link). */
  workspace?: WorkspaceRef;
}

/**
 * A base: tables as tabs, a virtual-scrolling grid loading 1,000 rows a request, views, columns.
 * What can be changed follows the Base-Token's permission: read-only users see no edit controls.
 */
export function BaseEditor({ access, title, tableId, rowId, tableHref, head, comments = true, workspace }: BaseEditorProps) {
  const metadata = useMetadata(access);
  const canEdit = canEditBase(access);
  if (metadata.isLoading) return <Loading what={t('editor.opening')} />;
  if (metadata.error) return <ErrorText error={metadata.error} />;
  const tables = metadata.data?.tables ?? [];
  const table = tables.find((t) => t._id === tableId) ?? tables[0];
  return (
    <section className="editor">
      <div className="editor-head">
        <h1>{title}</h1>
        {head}
        {!canEdit && (
          <span className="tag" role="note">
            {t('editor.readOnly')}
          </span>
        )}
      </div>
      <nav className="tabs" aria-label={t('editor.tables')}>
        {tables.map((t) => (
          <a key={t._id} href={tableHref(t._id)} aria-current={t._id === table?._id ? 'page' : undefined}>
            {t.name}
          </a>
        ))}
        {canEdit && <NewTable access={access} />}
      </nav>
      {table ? (
        <TableView key={table._id} access={access} table={table} tables={tables} rowId={table._id === tableId ? rowId : undefined} canEdit={canEdit} comments={comments} workspace={workspace} />
      ) : (
        <Empty>{t('editor.noTables')}</Empty>
      )}
    </section>
  );
}

function NewTable({ access }: { access: BaseAccess }) {
  const client = useQueryClient();
  const action = useAction();
  return (
    <>
      <button
        type="button"
        className="ghost"
        onClick={() => {
          const name = window.prompt(t('editor.newTableName'));
          if (name)
            void action.run(async () => {
              await gateway(access, 'tables/', { method: 'POST', body: { table_name: name } });
              await client.invalidateQueries(['metadata', access.dtable_uuid]);
            });
        }}
      >
        {t('editor.newTable')}
      </button>
      <ErrorText error={action.error} />
    </>
  );
}

function TableView({ access, table, tables, rowId, canEdit, comments, workspace }: { access: BaseAccess; table: Table; tables: Table[]; rowId?: string; canEdit: boolean; comments: boolean; workspace?: WorkspaceRef }) {
  const client = useQueryClient();
  const [viewName, setViewName] = useState(table.views[0]?.name ?? '');
  const view = table.views.find((v) => v.name === viewName) ?? table.views[0];
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [panel, setPanel] = useState<'none' | 'columns' | 'view' | 'comments' | 'hide' | 'group' | 'transfer'>('none');
  const [term, setTerm] = useState('');
  const [expanded, setExpanded] = useState(false);
  const [matchAt, setMatchAt] = useState(-1);
  const [layout, setLayout, layoutError] = useLayout(access, table, view, canEdit);
  const key = ['rows', access.dtable_uuid, table._id, view?.name, JSON.stringify(view?.filters), JSON.stringify(view?.sorts), view?.filter_conjunction];
  const rows = useInfiniteQuery(
    key,
    async ({ pageParam = 0, signal }) => {
      const r = await gateway<{ rows: Row[] }>(access, `rows/?${q({ table_name: table.name, view_name: view?.name, start: pageParam, limit: PAGE, convert_keys: true })}`, { signal });
      return { rows: r.rows.map((row) => slimRow(row)), start: pageParam as number };
    },
    { getNextPageParam: (last) => (last.rows.length === PAGE ? last.start + PAGE : undefined), staleTime: 30_000 },
  );
  const allRows = useMemo(() => rows.data?.pages.flatMap((p) => p.rows) ?? [], [rows.data]);
  // Grouped by the view's first group-by: the grid's rows are then group headers and the loaded rows.
  const groupBy = view?.groupbys?.[0];
  const groupColumn = groupBy ? table.columns.find((c) => c.key === groupBy.column_key) : undefined;
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const gridRows = useMemo(
    () => (groupColumn ? groupRows(allRows, groupColumn, groupBy?.sort_type ?? 'up', collapsed) : allRows),
    [allRows, groupColumn, groupBy?.sort_type, collapsed],
  );
  const toggleGroup = useCallback(
    (groupKey: string) =>
      setCollapsed((old) => {
        const next = new Set(old);
        if (!next.delete(groupKey)) next.add(groupKey);
        return next;
      }),
    [],
  );
  const hasCollaborators = table.columns.some((c) => c.type === 'collaborator');
  // An external link's Base-Token may not list the base's users: its collaborator cells show ids.
  const people = useRelatedUsers(access, { enabled: hasCollaborators && comments });
  const hidden = view?.hidden_columns;
  const orderedColumns = useMemo(() => viewColumns(table.columns, view), [table.columns, view?.column_order, view?.column_widths]);
  const shownColumns = useMemo(() => orderedColumns.filter((c, i) => i === 0 || !hidden?.includes(c.key)), [orderedColumns, hidden]);
  const search = useSearch(gridRows, shownColumns, term);
  // Rebuilt only when the shown columns really change (not on every metadata reload, e.g. another
  // user's view change): new column objects would close an editor that is open.
  const columnsKey = JSON.stringify(shownColumns);
  const action = useAction();
  /** Puts `moving` right after `after` in the view's column order and saves the order in the view. */
  const saveMove = useCallback(
    (moving: string, after: string) => {
      if (view)
        void action.run(async () => {
          const column_order = movedOrder(orderedColumns, moving, after).slice(1);
          await gateway(access, `views/${encodeURIComponent(view.name)}/?${q({ table_name: table.name })}`, { method: 'PUT', body: { column_order } });
          await client.invalidateQueries(['metadata', access.dtable_uuid]);
        });
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [access, table.name, view?.name, orderedColumns],
  );
  /** A header dropped on another one. */
  const moveColumn = useCallback(
    (moving: string, onto: string) => {
      const target = moveTarget(shownColumns, moving, onto);
      if (target) saveMove(moving, target);
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [columnsKey, saveMove],
  );
  /** The columns panel's move buttons: one place left or right in the view's order (hidden columns count). */
  const stepColumn = (name: string, by: -1 | 1) => {
    const at = orderedColumns.findIndex((c) => c.name === name);
    const to = at + by;
    if (at <= 0 || to <= 0 || to >= orderedColumns.length) return;
    saveMove(name, orderedColumns[by < 0 ? to - 1 : to]!.name);
  };
  const columns = useMemo(() => {
    let cols = gridColumns(shownColumns, { access, table, tables, people: people.data ?? [], canEdit, workspace });
    if (canEdit) cols = draggableHeaders(cols, moveColumn);
    if (groupColumn) cols = groupedColumns(cols, toggleGroup);
    // Only while searching: a class per cell costs a call per rendered cell.
    const marked = term.trim() ? cols.map((c) => ({ ...c, cellClass: (row: Row) => (search.isMatch(row, c.key) ? 'match' : undefined) })) : cols;
    return [SelectColumn, ...marked];
  }, [columnsKey, table._id, access, people.data, canEdit, term, search, groupColumn?.key, toggleGroup, moveColumn]);
  const saveWidth = useWidthSaver(access, table, view, action.run, () => client.invalidateQueries(['metadata', access.dtable_uuid]));

  const grid = useRef<DataGridHandle>(null);
  const rowShown = useShowRow(rowId, gridRows, rows.isLoading, grid, (id) => {
    setSelected(new Set([id]));
    if (comments) setPanel('comments');
  });
  const commentRow = selected.size === 1 ? allRows.find((r) => selected.has(r._id)) : undefined;

  /** Writes cell values: shown at once, then the server's answer (or error) follows. */
  const writeRows = (updates: Array<{ rowId: string; values: Record<string, unknown> }>) => {
    const byId = new Map(updates.map((u) => [u.rowId, u.values]));
    client.setQueryData<RowPages>(key, (old) =>
      old ? { ...old, pages: old.pages.map((p) => ({ ...p, rows: p.rows.map((r) => (byId.has(r._id) ? { ...r, ...byId.get(r._id) } : r)) })) } : old,
    );
    return action.run(async () => {
      try {
        for (let i = 0; i < updates.length; i += WRITE_BATCH) {
          const batch = updates.slice(i, i + WRITE_BATCH);
          await gateway(access, 'rows/', { method: 'PUT', body: { table_name: table.name, updates: batch.map((u) => ({ row_id: u.rowId, row: u.values })) } });
        }
      } finally {
        await Promise.all([client.invalidateQueries(key), client.invalidateQueries(['row', access.dtable_uuid])]);
      }
    });
  };
  const operations = useMemo(() => operationRestore(access, () => Promise.all([client.invalidateQueries(key), client.invalidateQueries(['row', access.dtable_uuid])])), [access, client, JSON.stringify(key)]);
  const rowWrites = useMemo(() => directRowWrites(access, table, () => client.invalidateQueries(key)), [access, client, table, JSON.stringify(key)]);
  const history = useUndo(writeRows, operations, rowWrites);

  const onRowsChange = (next: Row[], data: RowsChangeData<Row>) => {
    // Compare rather than trust data.column: for a formatter's change (a checkbox click) the grid
    // reports the selected cell's column, which may be another one.
    const diff = [...new Set(data.indexes.flatMap((i) => Object.keys(next[i]!).filter((k) => next[i]![k] !== gridRows[i]?.[k])))];
    const columnNames = diff.length > 0 ? diff : data.column ? [data.column.key] : [];
    if (columnNames.length === 0) return;
    const pick = (r: Row | undefined) => Object.fromEntries(columnNames.map((c) => [c, r?.[c] ?? null]));
    const rowsChanged = data.indexes.map((i) => ({ rowId: next[i]!._id, before: pick(gridRows[i]), after: pick(next[i]) }));
    history.record({ rows: rowsChanged }, writeRows(rowsChanged.map((r) => ({ rowId: r.rowId, values: r.after }))));
  };

  // Every field, hidden ones too, for the expanded row.
  const formColumns = useMemo(
    () => (expanded ? gridColumns(table.columns, { access, table, tables, people: people.data ?? [], canEdit, workspace }) : []),
    [expanded, table, access, tables, people.data, canEdit, workspace],
  );
  // The view's rows leave out its hidden fields: the form reads the whole row.
  const fullRow = useQuery(
    ['row', access.dtable_uuid, table._id, commentRow?._id],
    () => gateway<Row>(access, `rows/${encodeURIComponent(commentRow!._id)}/?${q({ table_name: table.name, convert_keys: true })}`).then(slimRow),
    { enabled: expanded && commentRow !== undefined },
  );
  const formRow = commentRow && fullRow.data ? { ...fullRow.data, ...commentRow } : undefined;
  const saveFromForm = (before: Row, after: Row) => {
    const names = Object.keys(after).filter((k) => k !== '_id' && after[k] !== before[k]);
    if (names.length === 0) return;
    const pick = (r: Row) => Object.fromEntries(names.map((c) => [c, r[c] ?? null]));
    history.record({ rows: [{ rowId: after._id, before: pick(before), after: pick(after) }] }, writeRows([{ rowId: after._id, values: pick(after) }]));
  };

  // The grid's selected cell (index among the grid's columns, 0 being the selection column): the
  // anchor of a block of cells (range) extended with Shift+arrows, Shift+click or a mouse drag.
  const cellAt = useRef<CellPos | null>(null);
  const range = useRangeSelection(grid, cellAt, gridRows, shownColumns.length, (r) => !isGroupRow(r));
  const inField = (target: EventTarget) => (target as HTMLElement).closest('input, textarea, select') !== null;
  /** Clipboard and Delete act on cells only while the grid has the focus (not in a panel or the toolbar). */
  const onGrid = (target: EventTarget) => (target as HTMLElement).closest('.grid') !== null && !inField(target);

  /** The block the clipboard and Delete act on: the range, else the selected cell. */
  const block = () => {
    if (range.range) return bounds(range.range);
    const at = cellAt.current;
    return at && at.idx >= 1 && gridRows[at.rowIdx] ? { top: at.rowIdx, bottom: at.rowIdx, left: at.idx, right: at.idx } : null;
  };

  /** Keys before the grid sees them: range keys, Delete, undo and redo. */
  const onKeyDown = (e: KeyboardEvent) => {
    if (range.onKeyDown(e) || toggleGroupKey(e) || clearCells(e)) {
      e.preventDefault();
      e.stopPropagation();
      return;
    }
    // Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) anywhere in the table view but in a text field; inside an input the browser's own undo applies.
    if (!canEdit || !(e.ctrlKey || e.metaKey) || inField(e.target)) return;
    const k = e.key.toLowerCase();
    if (k === 'z' && !e.shiftKey) void action.run(history.undo);
    else if ((k === 'z' && e.shiftKey) || k === 'y') void action.run(history.redo);
    else return;
    // Handled before the grid sees it: the grid would take the key as typing and open an editor.
    e.preventDefault();
    e.stopPropagation();
  };

  /** Enter or Space on a group's header collapses or expands the group. */
  const toggleGroupKey = (e: KeyboardEvent) => {
    const row = cellAt.current ? gridRows[cellAt.current.rowIdx] : undefined;
    if (!row || !isGroupRow(row) || (e.key !== 'Enter' && e.key !== ' ') || (e.target as HTMLElement).closest('input, textarea, select, button')) return false;
    toggleGroup(row._group.key);
    return true;
  };

  /** Delete or Backspace clears the selected cells (the range, or the selected cell): one undoable batch write. */
  const clearCells = (e: KeyboardEvent) => {
    const b = block();
    if (!canEdit || !b || !onGrid(e.target) || (e.key !== 'Delete' && e.key !== 'Backspace')) return false;
    const changes: Array<{ rowId: string; before: Record<string, unknown>; after: Record<string, unknown> }> = [];
    for (let r = b.top; r <= b.bottom; r++) {
      const row = gridRows[r];
      if (!row || isGroupRow(row)) continue;
      const before: Record<string, unknown> = {};
      const after: Record<string, unknown> = {};
      for (let c = b.left; c <= b.right; c++) {
        const column = shownColumns[c - 1];
        if (!column || pastedValue(column, '') === undefined) continue;
        before[column.name] = row[column.name] ?? null;
        after[column.name] = null;
      }
      if (Object.keys(after).length > 0) changes.push({ rowId: row._id, before, after });
    }
    if (changes.length === 0) return false;
    history.record({ rows: changes }, writeRows(changes.map((c) => ({ rowId: c.rowId, values: c.after }))));
    return true;
  };

  /** Ctrl+C copies the selected cells: the range as tab-separated lines (a spreadsheet pastes it as the same block), or one cell's text. */
  const onCopy = (e: ClipboardEvent) => {
    const b = block();
    if (!b || !onGrid(e.target)) return;
    const text = range.range ? rangeText(range.range, gridRows, shownColumns) : copyText(gridRows[b.top]![shownColumns[b.left - 1]!.name]);
    e.clipboardData.setData('text/plain', text);
    e.preventDefault();
  };

  /**
   * A block pasted on the selected cell or range (tab-separated, e.g. from a spreadsheet) fills as
   * many cells to the right and below from its top-left cell, adding rows when it runs past the last
   * one; one value pasted on a range fills the whole range. One undoable batch write (and one append
   * for the new rows); the pasted cells become the selected range.
   */
  const onPaste = (e: ClipboardEvent) => {
    const b = block();
    if (!canEdit || !b || !onGrid(e.target)) return;
    e.preventDefault();
    let lines = parseBlock(e.clipboardData.getData('text/plain'));
    if (range.range && lines.length === 1 && lines[0]!.length === 1) {
      const one = lines[0]![0]!;
      lines = Array.from({ length: b.bottom - b.top + 1 }, () => Array.from({ length: b.right - b.left + 1 }, () => one));
    }
    const valuesOf = (line: string[]) => {
      const values: Record<string, unknown> = {};
      line.forEach((text, j) => {
        const column = shownColumns[b.left - 1 + j];
        const value = column ? pastedValue(column, text) : undefined;
        if (column && value !== undefined) values[column.name] = value;
      });
      return values;
    };
    // The rows from the top-left cell down (a group's header is not a row).
    const targets = gridRows.slice(b.top, b.top + lines.length * 2 + 1).filter((r) => !isGroupRow(r)).slice(0, lines.length);
    const updates = lines
      .slice(0, targets.length)
      .map((line, i) => ({ row: targets[i]!, values: valuesOf(line) }))
      .filter((u) => Object.keys(u.values).length > 0);
    const extra = lines.slice(targets.length).map(valuesOf);
    // One undo step: the cell edits and the appended rows (one operation per batch).
    const parts: Part[] = [];
    if (updates.length > 0) {
      const change = { rows: updates.map((u) => ({ rowId: u.row._id, before: Object.fromEntries(Object.keys(u.values).map((k) => [k, u.row[k] ?? null])), after: u.values })) };
      parts.push({ change, written: writeRows(updates.map((u) => ({ rowId: u.row._id, values: u.values }))) });
    }
    if (extra.length > 0) {
      const appends = Array.from({ length: Math.ceil(extra.length / WRITE_BATCH) }, (_, i) => ({ rows: extra.slice(i * WRITE_BATCH, (i + 1) * WRITE_BATCH), change: insertChange() }));
      const appended = action.run(async () => {
        try {
          for (const a of appends) await appendRows(a.rows, a.change);
        } finally {
          await client.invalidateQueries(key);
        }
      });
      // Each batch's operation is looked up once all are stored (a later batch is not yet its rows' newest then, but nothing else is).
      for (const a of appends) parts.push({ change: a.change, written: appended });
    }
    history.recordStep(parts);
    const width = Math.max(...lines.map((l) => l.length));
    if (!groupColumn && (lines.length > 1 || width > 1))
      range.set({ anchor: { idx: b.left, rowIdx: b.top }, end: { idx: Math.min(b.left + width - 1, shownColumns.length), rowIdx: b.top + lines.length - 1 } });
  };

  const nextMatch = (backwards = false) => {
    const count = search.matches.length;
    if (count === 0) return;
    const at = (matchAt + (backwards ? count - 1 : 1)) % count;
    setMatchAt(at);
    const m = search.matches[at]!;
    grid.current?.selectCell({ rowIdx: m.rowIdx, idx: m.columnIdx + 1 });
  };

  const layoutChoices = layoutColumns(layout.kind, table.columns);
  const layoutColumn = layoutChoices.find((c) => c.key === layout.column) ?? layoutChoices[0];
  const openRow = (row: Row) => {
    setSelected(new Set([row._id]));
    setExpanded(true);
  };
  /** A kanban card moved to another lane: a cell edit (undoable). */
  const moveCard = (row: Row, value: string | null) => {
    const name = layoutColumn!.name;
    history.record({ rows: [{ rowId: row._id, before: { [name]: row[name] ?? null }, after: { [name]: value } }] }, writeRows([{ rowId: row._id, values: { [name]: value } }]));
  };
  const addFromForm = async (values: Record<string, unknown>) => {
    await gateway(access, 'rows/', { method: 'POST', body: { table_name: table.name, rows: [values] } });
    await client.invalidateQueries(key);
  };
  const layoutView = () => {
    if (layout.kind === 'gallery') return <GalleryView rows={allRows} columns={shownColumns} onOpen={openRow} />;
    if (layout.kind === 'form') return canEdit ? <FormView columns={table.columns} onSubmit={addFromForm} /> : null;
    if (!layoutColumn) return <p className="notice">{t(layout.kind === 'kanban' ? 'layout.noColumn.kanban' : 'layout.noColumn.calendar')}</p>;
    if (layout.kind === 'kanban') return <KanbanView rows={allRows} columns={shownColumns} stack={layoutColumn} canEdit={canEdit} onMove={moveCard} />;
    return <CalendarView rows={allRows} columns={shownColumns} dateColumn={layoutColumn} onOpen={openRow} />;
  };

  /** A step of added rows: its rows' ids are filled in by `appendRows`. */
  const insertChange = (): Change => ({ kind: 'insert', rows: [] });
  /** Appends rows (one operation) and records their ids in `change`. */
  const appendRows = async (rows: Array<Record<string, unknown>>, change: Change) => {
    const answer = await gateway<{ row_ids: Array<{ _id: string }> }>(access, 'rows/', { method: 'POST', body: { table_name: table.name, rows } });
    change.rows = answer.row_ids.map((r) => ({ rowId: r._id, before: {}, after: {} }));
  };
  const addRow = () => {
    const change = insertChange();
    const added = action.run(async () => {
      try {
        await appendRows([{}], change);
      } finally {
        await client.invalidateQueries(key);
      }
    });
    history.record(change, added);
    return added;
  };
  const deleteRows = () => {
    const ids = [...selected];
    const change: Change = { kind: 'delete', rows: ids.map((rowId) => ({ rowId, before: {}, after: {} })) };
    const deleted = action.run(async () => {
      try {
        // Their cells first: a user who may not restore operations undoes the delete by adding them again.
        const cells = new Map((await rowWrites.read(ids).catch(() => [])).map((r) => [r.rowId, r.values]));
        for (const r of change.rows) r.before = cells.get(r.rowId) ?? {};
        await gateway(access, 'rows/', { method: 'DELETE', body: { table_name: table.name, row_ids: ids } });
        setSelected(new Set());
      } finally {
        await client.invalidateQueries(key);
      }
    });
    history.record(change, deleted);
    return deleted;
  };

  return (
    <div
      className="table-view"
      onKeyDownCapture={onKeyDown}
      onCopy={onCopy}
      onPaste={onPaste}
      onMouseDown={range.onMouseDown}
      onMouseOver={range.onMouseOver}
      onClickCapture={range.onClickCapture}
    >
      {range.range && <style>{rangeStyle(range.range)}</style>}
      <div className="toolbar" role="toolbar" aria-label={t('toolbar.label')}>
        <label>
          {t('toolbar.view')}{' '}
          <select aria-label={t('toolbar.view')} value={view?.name} onChange={(e) => setViewName(e.target.value)}>
            {table.views.map((v) => (
              <option key={v._id}>{v.name}</option>
            ))}
          </select>
        </label>
        <label>
          {t('layout.label')}{' '}
          <select aria-label={t('layout.label')} value={layout.kind} onChange={(e) => setLayout({ kind: e.target.value as LayoutKind })}>
            {LAYOUTS.filter((k) => canEdit || k !== 'form').map((k) => (
              <option key={k} value={k}>
                {t(`layout.${k}`)}
              </option>
            ))}
          </select>
        </label>
        {(layout.kind === 'kanban' || layout.kind === 'calendar') && layoutChoices.length > 0 && (
          <label>
            {t(`layout.column.${layout.kind}`)}{' '}
            <select aria-label={t(`layout.column.${layout.kind}`)} value={layoutColumn?.key} onChange={(e) => setLayout({ kind: layout.kind, column: e.target.value })}>
              {layoutChoices.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <ErrorText error={layoutError} />
        {canEdit && (
          <>
            <button type="button" aria-pressed={panel === 'view'} onClick={() => setPanel(panel === 'view' ? 'none' : 'view')}>
              {t('toolbar.filterSort')}{view && view.filters.length + view.sorts.length > 0 ? ` (${view.filters.length + view.sorts.length})` : ''}
            </button>
            <button type="button" aria-pressed={panel === 'columns'} onClick={() => setPanel(panel === 'columns' ? 'none' : 'columns')}>
              {t('toolbar.columns')}
            </button>
            <button type="button" onClick={() => void addRow()} disabled={action.busy}>
              {t('toolbar.addRow')}
            </button>
          </>
        )}
        {canEdit && (
          <>
            <button type="button" aria-pressed={panel === 'hide'} onClick={() => setPanel(panel === 'hide' ? 'none' : 'hide')}>
              {t('toolbar.hide')}
              {hidden && hidden.length > 0 ? ` (${hidden.length})` : ''}
            </button>
            <button type="button" aria-pressed={panel === 'group'} onClick={() => setPanel(panel === 'group' ? 'none' : 'group')}>
              {t('toolbar.group')}
              {groupColumn ? `: ${groupColumn.name}` : ''}
            </button>
            <button type="button" onClick={() => void action.run(history.undo)} disabled={!history.canUndo} title={t('baseEditor.ctrlZ')}>
              {t('toolbar.undo')}
            </button>
            <button type="button" onClick={() => void action.run(history.redo)} disabled={!history.canRedo} title={t('baseEditor.ctrlShiftZ')}>
              {t('toolbar.redo')}
            </button>
          </>
        )}
        <input
          type="search"
          className="search"
          aria-label={t('search.label')}
          placeholder={t('search.placeholder')}
          value={term}
          onChange={(e) => {
            setTerm(e.target.value);
            setMatchAt(-1);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              nextMatch(e.shiftKey);
            }
          }}
        />
        {range.range && (
          <span className="muted small" role="status" aria-label={t('range.status')}>
            {t('range.size', rangeSize(range.range))}
          </span>
        )}
        {term.trim() && (
          <span className="muted small" role="status" aria-label={t('search.status')}>
            {search.matches.length === 0 ? t('search.none') : t('search.count', { at: matchAt >= 0 ? matchAt + 1 : 0, count: search.matches.length })}
          </span>
        )}
        <button type="button" disabled={selected.size !== 1} title={selected.size === 1 ? undefined : t('toolbar.expandHint')} onClick={() => setExpanded(true)}>
          {t('toolbar.expand')}
        </button>
        {comments && (
          <button
            type="button"
            aria-pressed={panel === 'comments'}
            disabled={selected.size !== 1}
            title={selected.size === 1 ? undefined : t('toolbar.commentsHint')}
            onClick={() => setPanel(panel === 'comments' ? 'none' : 'comments')}
          >
            {t('toolbar.comments')}
          </button>
        )}
        {workspace && (
          <button type="button" aria-pressed={panel === 'transfer'} onClick={() => setPanel(panel === 'transfer' ? 'none' : 'transfer')}>
            {t('transfer.button')}
          </button>
        )}
        {canEdit && (
          <ConfirmButton label={t('toolbar.deleteRows', { count: selected.size })} question={t('toolbar.deleteRowsQuestion', { count: selected.size })} disabled={selected.size === 0} onConfirm={() => void deleteRows()} />
        )}
        <span className="muted small" role="status">
          {rows.isFetching ? t('toolbar.loadingRows') : t('toolbar.rowCount', { count: `${allRows.length}${rows.hasNextPage ? '+' : ''}` })}
        </span>
      </div>
      <ErrorText error={action.error} />
      {rowShown === false && <p className="notice">{t('grid.rowNotLoaded')}</p>}
      {panel === 'view' && canEdit && view && <ViewPanel access={access} table={table} view={view} onViewChange={setViewName} />}
      {panel === 'hide' && canEdit && view && <HideColumnsPanel access={access} table={table} view={view} />}
      {panel === 'group' && canEdit && view && <GroupPanel access={access} table={table} view={view} />}
      {panel === 'columns' && canEdit && <ColumnsPanel access={access} table={table} columns={orderedColumns} onMove={view ? stepColumn : undefined} />}
      {panel === 'transfer' && workspace && <TransferPanel access={access} workspace={workspace} table={table} tables={tables} view={view} canEdit={canEdit} />}
      {panel === 'comments' && commentRow && <CommentsPanel key={commentRow._id} access={access} table={table} row={commentRow} onClose={() => setPanel('none')} />}
      {expanded && formRow && (
        <RowForm row={formRow} columns={formColumns} types={new Map(table.columns.map((c) => [c.name, c.type]))} onSave={saveFromForm} onClose={() => setExpanded(false)} />
      )}
      {rows.error ? <ErrorText error={rows.error} /> : null}
      {rows.isLoading ? (
        <Loading what={t('grid.loading')} />
      ) : layout.kind !== 'grid' ? (
        layoutView()
      ) : (
        <DataGrid
          ref={grid}
          className="grid"
          style={gridRowHeightStyle}
          aria-label={t('grid.label', { table: table.name })}
          columns={columns}
          rows={gridRows}
          rowKeyGetter={rowKey}
          rowClass={range.rowClass}
          selectedRows={selected}
          onSelectedRowsChange={(s) => setSelected(new Set([...s].filter((id) => !isGroupRow({ _id: id as string }))))}
          onSelectedCellChange={(position) => {
            cellAt.current = position;
            range.clear();
          }}
          onColumnResize={canEdit ? (idx, width) => saveWidth(String(columns[idx]!.key), width) : undefined}
          onRowsChange={onRowsChange}
          rowHeight={ROW_HEIGHT}
          emptyRowsRenderer={() => <div className="empty">{t(view && view.filters.length > 0 ? 'grid.emptyFiltered' : canEdit ? 'grid.emptyEditable' : 'grid.empty')}</div>}
          onScroll={(e) => {
            // Geometry is read only while pages remain to load: a read can force a layout in every scroll frame.
            if (!rows.hasNextPage || rows.isFetchingNextPage) return;
            const el = e.currentTarget;
            if (el.scrollTop + el.clientHeight > el.scrollHeight - 600) void rows.fetchNextPage();
          }}
        />
      )}
    </div>
  );
}

/**
 * A link to a row (`#/base/…/table/<id>/row/<row id>`, from the inbox): once the rows are loaded,
 * scroll to it, select it and open its comments. Returns whether it was found (undefined: not yet).
 */
function useShowRow(rowId: string | undefined, rows: Row[], loading: boolean, grid: RefObject<DataGridHandle>, select: (id: string) => void): boolean | undefined {
  const [result, setResult] = useState<{ id: string; found: boolean }>();
  useEffect(() => {
    if (!rowId || loading || result?.id === rowId) return;
    const index = rows.findIndex((r) => r._id === rowId);
    if (index >= 0) {
      grid.current?.scrollToRow(index);
      select(rowId);
    }
    setResult({ id: rowId, found: index >= 0 });
  }, [rowId, rows, loading, result, grid, select]);
  return rowId && result?.id === rowId ? result.found : undefined;
}

/** Cells a row can be given again (no computed columns, no system fields). */
const COMPUTED = new Set(['formula', 'link-formula', 'creator', 'ctime', 'mtime', 'last-modifier', 'auto-number', 'button', 'link']);
/** Rows read for undo one request each, this many at a time, up to READ_MAX (the rest from the loaded rows would lose hidden cells: not read). */
const READ_AT_ONCE = 8;
const READ_MAX = 200;

/** Undo's direct row writes (for users who may not restore operations): read a row's cells, add rows, delete rows. */
function directRowWrites(access: BaseAccess, table: Table, refresh: () => Promise<unknown>): RowWrites {
  const writable = new Set(table.columns.filter((c) => !COMPUTED.has(c.type)).map((c) => c.name));
  const cellsOf = (row: Row) => Object.fromEntries(Object.entries(row).filter(([k, v]) => writable.has(k) && v !== null && v !== undefined));
  const readOne = (id: string) =>
    gateway<Row>(access, `rows/${encodeURIComponent(id)}/?${q({ table_name: table.name, convert_keys: true })}`).then(
      (row) => ({ rowId: id, values: cellsOf(row) }),
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return undefined;
        throw error;
      },
    );
  return {
    read: async (ids) => {
      const found: Array<{ rowId: string; values: Record<string, unknown> }> = [];
      const wanted = ids.slice(0, READ_MAX);
      for (let i = 0; i < wanted.length; i += READ_AT_ONCE) for (const r of await Promise.all(wanted.slice(i, i + READ_AT_ONCE).map(readOne))) if (r) found.push(r);
      return found;
    },
    add: async (rows) => {
      const ids: string[] = [];
      try {
        for (let i = 0; i < rows.length; i += WRITE_BATCH) {
          const answer = await gateway<{ row_ids: Array<{ _id: string }> }>(access, 'rows/', { method: 'POST', body: { table_name: table.name, rows: rows.slice(i, i + WRITE_BATCH) } });
          ids.push(...answer.row_ids.map((r) => r._id));
        }
      } finally {
        await refresh();
      }
      return ids;
    },
    remove: async (ids) => {
      try {
        for (let i = 0; i < ids.length; i += WRITE_BATCH) await gateway(access, 'rows/', { method: 'DELETE', body: { table_name: table.name, row_ids: ids.slice(i, i + WRITE_BATCH) } });
      } finally {
        await refresh();
      }
    },
  };
}
