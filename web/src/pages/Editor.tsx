import { useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { useInfiniteQuery, useQueryClient, type InfiniteData } from '@tanstack/react-query';
import DataGrid, { type DataGridHandle, type RowsChangeData } from 'react-data-grid';
import { SelectColumn } from '../grid/select-column';
import { href } from '../router';
import { ConfirmButton, Empty, ErrorText, Loading, useAction } from '../ui';
import { gateway, q, slimRow, useBaseAccess, useMetadata, type BaseAccess } from '../grid/base';
import { gridColumns } from '../grid/cells';
import { ColumnsPanel } from '../grid/ColumnsPanel';
import { ViewPanel } from '../grid/ViewPanel';
import { useLiveBase } from '../grid/live-base';
import { CommentsPanel } from '../grid/CommentsPanel';
import type { Row, Table } from '../types';

const PAGE = 1000;
const LIVE_TEXT = { connecting: 'connecting…', live: 'live', offline: 'offline' } as const;
const LIVE_TITLE = {
  connecting: 'Connecting to the real-time channel',
  live: 'Changes by others appear as they happen',
  offline: 'Not connected: changes by others show after a refresh',
} as const;
type RowPages = InfiniteData<{ rows: Row[]; start: number }>;
const rowKey = (r: Row) => r._id;

/** The base editor: tables as tabs, a virtual-scrolling grid loading 1,000 rows a request, views, columns. */
export function Editor({ workspaceId, baseName, tableId, rowId }: { workspaceId: string; baseName: string; tableId?: string; rowId?: string }) {
  const access = useBaseAccess(workspaceId, baseName);
  const metadata = useMetadata(access.data);
  const live = useLiveBase(access.data, workspaceId, baseName);
  if (access.isLoading || metadata.isLoading) return <Loading what="Opening base" />;
  if (access.error) return <ErrorText error={access.error} />;
  if (metadata.error) return <ErrorText error={metadata.error} />;
  const tables = metadata.data?.tables ?? [];
  const table = tables.find((t) => t._id === tableId) ?? tables[0];
  return (
    <section className="editor">
      <div className="editor-head">
        <h1>{baseName}</h1>
        <a href={href('base', workspaceId, baseName, 'share')}>Share</a>
        <a href={href('base', workspaceId, baseName, 'integrations')}>Integrations</a>
        <span className={`live live-${live}`} role="status" aria-label={`Live updates: ${LIVE_TEXT[live]}`} title={LIVE_TITLE[live]}>
          {LIVE_TEXT[live]}
        </span>
      </div>
      <nav className="tabs" aria-label="Tables">
        {tables.map((t) => (
          <a key={t._id} href={href('base', workspaceId, baseName, 'table', t._id)} aria-current={t._id === table?._id ? 'page' : undefined}>
            {t.name}
          </a>
        ))}
        <NewTable access={access.data!} />
      </nav>
      {table ? <TableView key={table._id} access={access.data!} table={table} tables={tables} rowId={table._id === tableId ? rowId : undefined} /> : <Empty>This base has no tables.</Empty>}
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
          const name = window.prompt('Name of the new table');
          if (name)
            void action.run(async () => {
              await gateway(access, 'tables/', { method: 'POST', body: { table_name: name } });
              await client.invalidateQueries(['metadata', access.dtable_uuid]);
            });
        }}
      >
        + Table
      </button>
      <ErrorText error={action.error} />
    </>
  );
}

function TableView({ access, table, tables, rowId }: { access: BaseAccess; table: Table; tables: Table[]; rowId?: string }) {
  const client = useQueryClient();
  const [viewName, setViewName] = useState(table.views[0]?.name ?? '');
  const view = table.views.find((v) => v.name === viewName) ?? table.views[0];
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [panel, setPanel] = useState<'none' | 'columns' | 'view' | 'comments'>('none');
  const action = useAction();
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
  const columns = useMemo(() => [SelectColumn, ...gridColumns(table.columns, { access, table, tables })], [table.columns, access, tables]);

  const grid = useRef<DataGridHandle>(null);
  const rowShown = useShowRow(rowId, allRows, rows.isLoading, grid, (id) => {
    setSelected(new Set([id]));
    setPanel('comments');
  });
  const commentRow = selected.size === 1 ? allRows.find((r) => selected.has(r._id)) : undefined;

  const onRowsChange = (next: Row[], data: RowsChangeData<Row>) => {
    const changed = data.indexes.map((i) => next[i]!);
    // Compare rather than trust data.column: for a formatter's change (a checkbox click) the grid
    // reports the selected cell's column, which may be another one.
    const diff = [...new Set(data.indexes.flatMap((i) => Object.keys(next[i]!).filter((k) => next[i]![k] !== allRows[i]?.[k])))];
    const columnNames = diff.length > 0 ? diff : data.column ? [data.column.key] : [];
    if (columnNames.length === 0) return;
    // Shown at once; the server's answer (or error) follows.
    client.setQueryData<RowPages>(key, (old) =>
      old ? { ...old, pages: old.pages.map((p) => ({ ...p, rows: p.rows.map((r) => changed.find((c) => c._id === r._id) ?? r) })) } : old,
    );
    void action.run(async () => {
      try {
        await gateway(access, 'rows/', {
          method: 'PUT',
          body: { table_name: table.name, updates: changed.map((r) => ({ row_id: r._id, row: Object.fromEntries(columnNames.map((c) => [c, r[c] ?? null])) })) },
        });
      } finally {
        await client.invalidateQueries(key);
      }
    });
  };

  const addRow = () =>
    action.run(async () => {
      await gateway(access, 'rows/', { method: 'POST', body: { table_name: table.name, rows: [{}] } });
      await client.invalidateQueries(key);
    });
  const deleteRows = () =>
    action.run(async () => {
      await gateway(access, 'rows/', { method: 'DELETE', body: { table_name: table.name, row_ids: [...selected] } });
      setSelected(new Set());
      await client.invalidateQueries(key);
    });

  return (
    <div className="table-view">
      <div className="toolbar" role="toolbar" aria-label="Table tools">
        <label>
          View{' '}
          <select aria-label="View" value={view?.name} onChange={(e) => setViewName(e.target.value)}>
            {table.views.map((v) => (
              <option key={v._id}>{v.name}</option>
            ))}
          </select>
        </label>
        <button type="button" aria-pressed={panel === 'view'} onClick={() => setPanel(panel === 'view' ? 'none' : 'view')}>
          Filter & sort{view && view.filters.length + view.sorts.length > 0 ? ` (${view.filters.length + view.sorts.length})` : ''}
        </button>
        <button type="button" aria-pressed={panel === 'columns'} onClick={() => setPanel(panel === 'columns' ? 'none' : 'columns')}>
          Columns
        </button>
        <button type="button" onClick={() => void addRow()} disabled={action.busy}>
          + Row
        </button>
        <button
          type="button"
          aria-pressed={panel === 'comments'}
          disabled={selected.size !== 1}
          title={selected.size === 1 ? undefined : 'Select one row to see its comments'}
          onClick={() => setPanel(panel === 'comments' ? 'none' : 'comments')}
        >
          Comments
        </button>
        <ConfirmButton label={`Delete ${selected.size} row(s)`} question={`Delete ${selected.size} row(s)?`} disabled={selected.size === 0} onConfirm={() => void deleteRows()} />
        <span className="muted small" role="status">
          {rows.isFetching ? 'Loading rows…' : `${allRows.length}${rows.hasNextPage ? '+' : ''} rows`}
        </span>
      </div>
      <ErrorText error={action.error} />
      {rowShown === false && <p className="notice">The linked row is not among the loaded rows of this view (it may be filtered out, further down, or deleted).</p>}
      {panel === 'view' && view && <ViewPanel access={access} table={table} view={view} onViewChange={setViewName} />}
      {panel === 'columns' && <ColumnsPanel access={access} table={table} />}
      {panel === 'comments' && commentRow && <CommentsPanel key={commentRow._id} access={access} table={table} row={commentRow} onClose={() => setPanel('none')} />}
      {rows.error ? <ErrorText error={rows.error} /> : null}
      {rows.isLoading ? (
        <Loading what="Loading rows" />
      ) : (
        <DataGrid
          ref={grid}
          className="rdg-light grid"
          aria-label={`Rows of ${table.name}`}
          columns={columns}
          rows={allRows}
          rowKeyGetter={rowKey}
          selectedRows={selected}
          onSelectedRowsChange={(s) => setSelected(s as Set<string>)}
          onRowsChange={onRowsChange}
          rowHeight={34}
          emptyRowsRenderer={() => <div className="empty">No rows{view && view.filters.length > 0 ? ' match this view' : ' yet — add one with “+ Row”'}.</div>}
          onScroll={(e) => {
            const el = e.currentTarget;
            if (el.scrollTop + el.clientHeight > el.scrollHeight - 600 && rows.hasNextPage && !rows.isFetchingNextPage) void rows.fetchNextPage();
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
