import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import type { BaseData } from '../rows/index.js';
import { historyRoutes } from './history.routes.js';
import { HistoryService } from './history.service.js';
import { recordWrite } from './operation-log.js';
import { keepDeletedTable, type BaseFiles } from './table-trash.js';
import { indexPendingRows } from './row-index.js';
import { backfillFiles } from './file-refs.js';
import { Snapshots, type SnapshotArchives } from './snapshots.js';
import { snapshotRoutes } from './snapshots.routes.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FileBlobs } from '../assets/index.js';

export { HistoryService } from './history.service.js';
export type { Operation, LoggedChange } from './history.types.js';
export type { SnapshotArchives } from './snapshots.js';
export type { BaseFiles } from './table-trash.js';
export { purgeBaseHistory } from './base-purge.js';

export interface HistoryModule {
  service: HistoryService;
  snapshots: Snapshots;
  routes: FastifyPluginAsyncTypebox;
  /** Daily pruning of operations older than OPERATION_LOG_RETENTION_DAYS; the row index's batches (row-index.ts). */
  ticks: Array<{ name: string; pattern: string; leaseMs: number; run(now: number): Promise<unknown> }>;
}

/** The operation log is filled in each write's transaction unless `retentionDays` is 0 (log off). */
export function createHistory(deps: {
  db: Db;
  clock: Clock;
  access: BaseAccess;
  baseData: BaseData;
  retentionDays: number;
  trashRetentionDays?: number;
  /** Where the files of a purged table's rows are deleted. */
  files?: BaseFiles;
  /** The whole-base archive (transfer module) for snapshots, with a temp folder and the largest snapshot in bytes. */
  snapshots: { archives: SnapshotArchives; blobs: FileBlobs; tmpDir: string; maxBytes: number };
}): HistoryModule {
  const service = new HistoryService(deps.db, deps.clock, deps.baseData.rows, deps.retentionDays, deps.trashRetentionDays, deps.files);
  if (deps.retentionDays > 0) deps.baseData.writer.onWrite((trx, write, statement) => recordWrite(trx, deps.baseData.writer.dialect, write, statement));
  // A deleted table goes to the trash (kept TRASH_RETENTION_DAYS, then purged by the tick below).
  deps.baseData.writer.onTableDelete(keepDeletedTable);
  const snapshots = new Snapshots({ db: deps.db, clock: deps.clock, baseById: (id) => deps.access.findById(id), ...deps.snapshots });
  const history = historyRoutes({ history: service, access: deps.access });
  const snapshotPaths = snapshotRoutes({ snapshots, access: deps.access });
  return {
    service,
    snapshots,
    routes: async (app) => {
      await app.register(history);
      await app.register(snapshotPaths);
    },
    ticks: [
      // Daily at 02:13: a snapshot of each base changed since its last one, then the tiered retention.
      { name: 'base-snapshots', pattern: '0 13 2 * * *', leaseMs: 2 * 60 * 60_000, run: () => snapshots.daily() },
      // Every 5 s (SQLite): the row-index entries of single-row changes, in one batch (row-index.ts);
      // readers of the row index write any still missing first, so this only keeps their share small.
      { name: 'operation-log-row-index', pattern: '*/5 * * * * *', leaseMs: 60_000, run: () => indexPendingRows(deps.db) },
      // Every minute until done: the file entries of a log from before them (file-refs.ts), 20 steps of 1,000.
      { name: 'operation-log-files-backfill', pattern: '0 * * * * *', leaseMs: 10 * 60_000, run: () => backfillFilesRun(deps.db) },
      { name: 'operation-log-prune', pattern: '0 41 3 * * *', leaseMs: 30 * 60_000, run: (now) => service.prune(now) },
      { name: 'table-trash-purge', pattern: '0 27 * * * *', leaseMs: 30 * 60_000, run: (now) => service.purgeExpiredTrash(now) },
    ],
  };
}

/** Up to 20 backfill steps (each its own short transaction); nothing once the mark is at 1. */
async function backfillFilesRun(db: Db): Promise<number> {
  let mark = 0;
  for (let i = 0; i < 20 && mark !== 1; i++) mark = await backfillFiles(db);
  return mark;
}
