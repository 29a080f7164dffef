import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { baseRoutes } from './base.routes.js';
import type { BaseData } from './base-data.js';
import { rowRoutes } from './rows.routes.js';
import { structureRoutes } from './structure.routes.js';
import { columnOptionsRoutes } from './column-options.routes.js';
import { rowLockRoutes } from './row-locks.routes.js';
import { archivedRowsRoutes } from './archived-rows.routes.js';
import { formulaPreviewRoutes } from './formula-preview.routes.js';

/** Every base-data route; `bodyLimit` is the base operations' own (BASE_BODY_LIMIT_BYTES). */
export function rowsRoutes(data: BaseData, bodyLimit: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(baseRoutes({ snapshots: data.snapshots, writer: data.writer }));
    await app.register(rowRoutes({ rows: data.rows, links: data.links, bodyLimit, snapshots: data.snapshots }));
    await app.register(structureRoutes({ tables: data.tables, columns: data.columns, views: data.views, bodyLimit }));
    await app.register(columnOptionsRoutes({ options: data.columnOptions, rows: data.rows, bodyLimit }));
    await app.register(rowLockRoutes({ locks: data.locks, bodyLimit }));
    await app.register(archivedRowsRoutes({ archived: data.archived, bodyLimit }));
    await app.register(formulaPreviewRoutes({ preview: data.formulaPreview, bodyLimit }));
  };
}
