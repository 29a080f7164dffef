import { useQuery } from '@tanstack/react-query';
import { api, basePath, type RequestOptions } from '../api';
import type { Row, Table } from '../types';

export interface BaseAccess {
  access_token: string;
  dtable_uuid: string;
}

/** Where the base lives, for the account routes (import, export, files); not on an external link. */
export interface WorkspaceRef {
  workspaceId: string;
  baseName: string;
}

/** A Base-Token for the signed-in user (valid three days; refreshed hourly). */
export function useBaseAccess(workspaceId: string, baseName: string) {
  return useQuery(['access', workspaceId, baseName], () => api<BaseAccess>(basePath(workspaceId, baseName, 'access-token/')), {
    staleTime: 60 * 60 * 1000,
  });
}

/** Calls a base endpoint under `/api-gateway/api/v2/dtables/<uuid>/` with the Base-Token. */
export function gateway<T>(access: BaseAccess, suffix: string, options: RequestOptions = {}): Promise<T> {
  return api<T>(`/api-gateway/api/v2/dtables/${access.dtable_uuid}/${suffix}`, { ...options, token: access.access_token });
}

export function useMetadata(access: BaseAccess | undefined) {
  return useQuery(
    ['metadata', access?.dtable_uuid],
    () => gateway<{ metadata: { tables: Table[] } }>(access!, 'metadata/').then((r) => r.metadata),
    { enabled: access !== undefined },
  );
}

export const q = (params: Record<string, string | number | boolean | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');

/** The row fields the API adds besides the columns; the grid shows none of them. */
const SYSTEM_FIELDS = new Set(['_ctime', '_mtime', '_creator', '_last_modifier', '_locked', '_locked_by', '_archived']);

/**
 * A row as the grid keeps it: without the system fields. Leaving them out keeps 100,000 loaded
 * rows' heap small, and with it the browser's garbage collection while scrolling (bench/README.md).
 * (Not filtered by the table's columns: a page fetched just before a new column's metadata arrives
 * would lose the new column's values.)
 */
export function slimRow(row: Row): Row {
  // A new object rather than `delete`, which would leave V8 a slower, larger dictionary object.
  const slim: Row = { _id: row._id };
  for (const key in row) if (!SYSTEM_FIELDS.has(key)) slim[key] = row[key];
  return slim;
}
