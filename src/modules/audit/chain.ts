import { sha256Hex } from '../../shared/crypto.js';
import type { AuditLogTable } from './audit.table.js';

/** JSON with object keys sorted at every depth, so the same row always hashes alike. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The fields a row's hash covers (everything but its id and the hashes). */
export type ChainedFields = Omit<AuditLogTable, 'id' | 'prev_hash' | 'hash'>;


export function rowHash(prevHash: string, fields: ChainedFields): string {
  const { seq, created_at, action, actor, ip, base_id, target, detail } = fields;
  return sha256Hex(prevHash + canonicalJson({ seq, created_at, action, actor, ip, base_id, target, detail }));
}
