import type { RequestOptions } from '../api';
import { gateway, q, type BaseAccess } from './base';
import type { OperationRestore } from './undo-history';

type LoggedOperation = { op_id: number; author: string; operation: string; reverts: number | null };
type Read = <T>(access: BaseAccess, suffix: string, options?: RequestOptions) => Promise<T>;

/** The `username` claim of a Base-Token (the signed-in user's id in the operation log's `author`), or '' when it has none. */
export function tokenUser(token: string): string {
  try {
    const payload = token.split('.')[1] ?? '';
    const bytes = Uint8Array.from(atob(payload.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { username?: unknown };
    return typeof claims.username === 'string' ? claims.username : '';
  } catch {
    return '';
  }
}

/**
 * Undo through the operation log: the newest operation of exactly these rows by this user, and
 * `restore-operations/`. The look-up runs after the write, so a later change to the same rows by someone
 * else may already be logged: taking it would make undo revert that change instead of being refused.
 * (The same user's change from another tab within that moment can still be taken.)
 */
export function operationRestore(access: BaseAccess, refresh: () => Promise<unknown>, read: Read = gateway): OperationRestore {
  const me = tokenUser(access.access_token);
  const recent = () => read<{ operations: LoggedOperation[] }>(access, `operations/?${q({ per_page: 20 })}`).then((r) => r.operations);
  return {
    latestOf: async (rowIds) => {
      const wanted = new Set(rowIds);
      // A write that failed before its rows were known (an append) has no operation.
      if (wanted.size === 0) return undefined;
      for (const op of await recent()) {
        if (me && op.author !== me) continue;
        const o = JSON.parse(op.operation) as { row_id?: string; row_ids?: string[] };
        const ids = o.row_ids ?? (o.row_id ? [o.row_id] : []);
        if (ids.length === wanted.size && ids.every((id) => wanted.has(id))) return op.op_id;
      }
      return undefined;
    },
    restore: async (opId) => {
      try {
        await read(access, `restore-operations/${opId}/`, { method: 'PUT', body: {} });
      } finally {
        await refresh();
      }
      return (await recent()).find((op) => op.reverts === opId)?.op_id;
    },
  };
}
