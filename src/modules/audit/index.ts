export { AuditService } from './audit.service.js';
export type { AuditEntry, AuditFilter, AuditRecord, VerifyResult } from './audit.service.js';
export { auditRoutes } from './audit.routes.js';
export { redact, REDACTED } from './redact.js';
export { canonicalJson, rowHash } from './chain.js';
export type { SnapshotTable } from './snapshots.js';
