export { AuditService } from './audit.service.js';
export type { AuditEntry, AuditFilter, AuditRecord, AuditTxReader, VerifyResult } from './audit.service.js';
export { auditRoutes } from './audit.routes.js';
export { redact, REDACTED } from './redact.js';
export { canonicalJson, fieldsDigest, rowHash } from './chain.js';
export type { SnapshotTable } from './snapshots.js';
