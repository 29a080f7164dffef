import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { badRequest } from '../../shared/errors.js';
import type { BaseGuard } from '../assets/index.js';
import type { BaseData } from '../rows/index.js';
import { exportSource } from './export-rows.js';
import { writeCsv, writeXlsx, type ExportFormat } from './export-writers.js';

export interface ExportRouteDeps {
  baseData: BaseData;
  guard: BaseGuard;
}

const tags = ['import and export'];
const account = { auth: 'account' } as const;
const Query = Type.Object({
  dtable_name: Type.String({ maxLength: 1024 }),
  table_id: Type.Optional(Type.String({ maxLength: 64 })),
  table_name: Type.Optional(Type.String({ maxLength: 1024 })),
  view_id: Type.Optional(Type.String({ maxLength: 64 })),
  view_name: Type.Optional(Type.String({ maxLength: 1024 })),
  format: Type.Optional(Type.String({ maxLength: 8 })),
});
const Params = Type.Object({ workspace_id: Type.String({ maxLength: 32 }) });

/** `synchronous-export/export-table-to-excel` and `export-view-to-excel` (and `format=csv`), streamed. */
export function exportRoutes({ baseData, guard }: ExportRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const [path, needsView] of [
      ['export-table-to-excel', false],
      ['export-view-to-excel', true],
    ] as const) {
      app.get(`/api/v2.1/workspace/:workspace_id/synchronous-export/${path}/`, { config: account, schema: { tags, params: Params, querystring: Query } }, async (request, reply) => {
        const q = request.query;
        const format: ExportFormat = q.format === undefined || q.format === 'xlsx' ? 'xlsx' : q.format === 'csv' ? 'csv' : (() => { throw badRequest('format invalid.'); })();
        if (needsView && !q.view_id && !q.view_name) throw badRequest('view_id invalid.');
        if (!q.table_id && !q.table_name) throw badRequest('table_id invalid.');
        const base = await guard.byName(currentAccount(request), request.params.workspace_id, q.dtable_name, 'r');
        const meta = await baseData.writer.read(base);
        const source = exportSource(baseData, base, meta, needsView ? q : { ...q, view_id: undefined, view_name: undefined });
        const name = `${source.view ? `${source.table.name}_${source.view.name}` : source.table.name}.${format}`;
        const body = new PassThrough();
        (format === 'csv' ? writeCsv(source, body) : writeXlsx(source, body)).catch((error: unknown) => {
          request.log.error({ err: error }, 'export failed mid-stream');
          body.destroy(error as Error);
        });
        return reply
          .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', attachment(name))
          .send(body);
      });
    }
  };
}

/** `Content-Disposition` of a download named `name` (ASCII fallback and the UTF-8 name). */
export function attachment(name: string): string {
  return `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
