import { useEffect, useState } from 'react';
import { useQueryClient, type InfiniteData, type QueryClient } from '@tanstack/react-query';
import { api, basePath } from '../api';
import { openLive, type LiveOperation, type LiveStatus } from '../live';
import { gateway, q, slimRow, type BaseAccess } from './base';
import type { Row, Table } from '../types';

type RowPages = InfiniteData<{ rows: Row[]; start: number }>;

/** Up to this many changed rows are fetched one by one and patched in; more reload the table. */
const PATCH_LIMIT = 50;
const FLUSH_MS = 250;

const ROW_OPS = new Set(['modify_row', 'modify_rows', 'delete_row', 'delete_rows']);

/**
 * Collects `update-dtable` operations for a moment, then updates the cached rows: changed rows are
 * read again and patched in place, deleted rows dropped, and anything else (inserted rows, links,
 * structure) reloads the tables it touches — so 100,000 loaded rows are not all fetched again for
 * one edited cell.
 */
class BaseUpdates {
  private modified = new Map<string, Set<string>>();
  private deleted = new Map<string, Set<string>>();
  private reload = new Set<string>();
  private structure = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: QueryClient,
    private readonly access: BaseAccess,
  ) {}

  add(op: LiveOperation): void {
    const ids = op.row_ids ?? (op.row_id ? [op.row_id] : []);
    if (ROW_OPS.has(op.op_type) && op.table_id && ids.length > 0) {
      const target = op.op_type.startsWith('delete') ? this.deleted : this.modified;
      const set = target.get(op.table_id) ?? new Set<string>();
      for (const id of ids) set.add(id);
      target.set(op.table_id, set);
    } else if (/row|link/.test(op.op_type)) {
      for (const id of [op.table_id, op.other_table_id, op.table1_id, op.table2_id]) if (typeof id === 'string') this.reload.add(id);
    } else {
      this.structure = true;
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  resync(): void {
    this.structure = true;
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  private rowsKey(tableId?: string) {
    return tableId ? ['rows', this.access.dtable_uuid, tableId] : ['rows', this.access.dtable_uuid];
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    const { modified, deleted, reload, structure } = this;
    this.modified = new Map();
    this.deleted = new Map();
    this.reload = new Set();
    this.structure = false;
    if (structure) {
      await this.client.invalidateQueries(['metadata', this.access.dtable_uuid]);
      await this.client.invalidateQueries(this.rowsKey());
      return;
    }
    for (const [tableId, ids] of deleted) {
      this.client.setQueriesData<RowPages>(this.rowsKey(tableId), (old) =>
        old ? { ...old, pages: old.pages.map((p) => ({ ...p, rows: p.rows.filter((r) => !ids.has(r._id)) })) } : old,
      );
    }
    const tables = this.client.getQueryData<{ tables: Table[] }>(['metadata', this.access.dtable_uuid])?.tables ?? [];
    for (const [tableId, ids] of modified) {
      const table = tables.find((t) => t._id === tableId);
      if (!table || ids.size > PATCH_LIMIT) reload.add(tableId);
      else await this.patch(table, [...ids]);
    }
    for (const tableId of reload) await this.client.invalidateQueries(this.rowsKey(tableId));
  }

  /** Reads the changed rows as the grid shows them (an unchanged row keeps its object, see keepIfSame) and puts them in place of the cached ones. */
  private async patch(table: Table, ids: string[]): Promise<void> {
    const fresh = new Map<string, Row>();
    await Promise.all(
      ids.map(async (id) => {
        try {
          fresh.set(id, slimRow(await gateway<Row>(this.access, `rows/${encodeURIComponent(id)}/?${q({ table_id: table._id, convert_keys: true })}`)));
        } catch {
          // gone meanwhile: its delete message follows
        }
      }),
    );
    // A view with filters or sorts may now include, exclude or reorder the row: reload those.
    for (const query of this.client.getQueryCache().findAll(this.rowsKey(table._id))) {
      const [, , , , filters, sorts] = query.queryKey as unknown[];
      if (filters !== '[]' || sorts !== '[]') void this.client.invalidateQueries(query.queryKey, { exact: true });
      else
        this.client.setQueryData<RowPages>(query.queryKey, (old) =>
          old ? { ...old, pages: old.pages.map((p) => ({ ...p, rows: p.rows.map((r) => keepIfSame(r, fresh.get(r._id))) })) } : old,
        );
    }
  }
}

/** Keeps the open base's cached rows and metadata current with others' changes. */
export function useLiveBase(access: BaseAccess | undefined, workspaceId: string, baseName: string): LiveStatus {
  const client = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>('connecting');
  useEffect(() => {
    if (!access) return undefined;
    const updates = new BaseUpdates(client, access);
    return openLive(access, { onStatus: setStatus, onUpdate: (op) => updates.add(op), onResync: () => updates.resync() }, () =>
      api<BaseAccess>(basePath(workspaceId, baseName, 'access-token/')),
    );
  }, [client, access, workspaceId, baseName]);
  return status;
}

/**
 * The fresh row, or the cached one when nothing in it changed: the grid closes an open editor when
 * the edited row's object is replaced, and the echo of the user's own earlier write must not do that.
 */
function keepIfSame(cached: Row, fresh: Row | undefined): Row {
  if (!fresh) return cached;
  const keys = new Set([...Object.keys(cached), ...Object.keys(fresh)]);
  for (const key of keys) if (JSON.stringify(cached[key]) !== JSON.stringify(fresh[key])) return fresh;
  return cached;
}
