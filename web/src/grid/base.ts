import { useQuery } from '@tanstack/react-query';
import { api, basePath, type RequestOptions } from '../api';
import type { Table } from '../types';

export interface BaseAccess {
  access_token: string;
  dtable_uuid: string;
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
