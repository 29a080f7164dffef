import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import type { BaseData } from '../rows/index.js';
import { historyRoutes } from './history.routes.js';
import { HistoryService } from './history.service.js';
import { recordWrite } from './operation-log.js';

export { HistoryService } from './history.service.js';
export type { Operation, LoggedChange } from './history.types.js';

export interface HistoryModule {
  service: HistoryService;
  routes: ReturnType<typeof historyRoutes>;
  /** Daily pruning of operations older than OPERATION_LOG_RETENTION_DAYS. */
  ticks: Array<{ name: string; pattern: string; leaseMs: number; run(now: number): Promise<unknown> }>;
}

/** The operation log is filled in each write's transaction unless `retentionDays` is 0 (log off). */
export function createHistory(deps: { db: Db; clock: Clock; access: BaseAccess; baseData: BaseData; retentionDays: number; trashRetentionDays?: number }): HistoryModule {
  const service = new HistoryService(deps.db, deps.clock, deps.baseData.rows, deps.retentionDays, deps.trashRetentionDays);
  if (deps.retentionDays > 0) deps.baseData.writer.onWrite((trx, write) => recordWrite(trx, deps.baseData.writer.dialect, write));
  return {
    service,
    routes: historyRoutes({ history: service, access: deps.access }),
    ticks: [{ name: 'operation-log-prune', pattern: '0 41 3 * * *', leaseMs: 30 * 60_000, run: (now) => service.prune(now) }],
  };
}
