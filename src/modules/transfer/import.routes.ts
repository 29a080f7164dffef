import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { discardUpload, receiveUpload, useStreamingMultipart, type ReceivedUpload, type UploadRouteDeps } from '../assets/index.js';
import type { BaseListing } from '../access/index.js';
import { sourceKind } from './import-source.js';
import { parseMapping } from './column-mapping.js';
import type { ImportFile, ImportService } from './import.service.js';

export interface ImportRouteDeps extends UploadRouteDeps {
  imports: ImportService;
}

const tags = ['import and export'];
const account = { auth: 'account' } as const;
const Params = Type.Object({ workspace_id: Type.String({ maxLength: 32 }) });
const prefix = '/api/v2.1/workspace/:workspace_id/synchronous-import';

/** `synchronous-import/…`: CSV or XLSX into a new base, a new table, appended, or updating by key columns; and a preview. */
export function importRoutes({ imports, guard, maxBytes, tmpDir, timeoutMs }: ImportRouteDeps): FastifyPluginAsyncTypebox {
  return async (scope) => {
    useStreamingMultipart(scope);
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();

    /** Receives the upload, runs `work` on it, and always removes the temp file. */
    async function withFile<T>(request: FastifyRequest, field: string, work: (upload: ReceivedUpload, file: ImportFile) => Promise<T>): Promise<T> {
      const upload = await receiveUpload(request.raw, { maxFileBytes: maxBytes, tmpDir, timeoutMs });
      try {
        const part = upload.file;
        if (!part || part.field !== field) throw badRequest(`${field} invalid.`);
        const kind = sourceKind(part.filename);
        const stem = part.filename.replace(/\.[^.]*$/, '').replace(/[/\\]/g, '_').trim() || 'Imported';
        return await work(upload, { path: part.tempFile, kind, stem });
      } finally {
        await discardUpload(upload);
      }
    }

    async function baseOf(request: FastifyRequest, upload: ReceivedUpload): Promise<BaseListing> {
      const uuid = upload.fields.dtable_uuid;
      if (!uuid) throw badRequest('dtable_uuid invalid.');
      const base = await guard.byUuid(currentAccount(request), uuid, 'rw');
      if (String(base.workspace_id) !== (request.params as { workspace_id: string }).workspace_id) throw notFound(`dtable ${uuid} not found.`);
      return base;
    }

    app.post(`${prefix}/preview/`, { config: account, schema: { tags, params: Params } }, async (request) =>
      withFile(request, 'file', async (_upload, file) => ({ tables: await imports.analyze(file) })),
    );
    app.post(`${prefix}/import-excel-csv-to-base/`, { config: account, schema: { tags, params: Params } }, async (request) =>
      withFile(request, 'dtable', async (_upload, file) => {
        const base = await imports.toNewBase(currentAccount(request), request.params.workspace_id, file);
        return { success: true, dtable: { id: base.id, uuid: base.uuid, name: base.name, workspace_id: base.workspace_id } };
      }),
    );
    app.post(`${prefix}/import-excel-csv-to-table/`, { config: account, schema: { tags, params: Params } }, async (request) =>
      withFile(request, 'file', async (upload, file) => {
        const tables = await imports.toNewTables(currentAccount(request), await baseOf(request, upload), file, parseMapping(upload.fields.column_mapping));
        return { success: true, tables };
      }),
    );
    app.post(`${prefix}/append-excel-csv-to-table/`, { config: account, schema: { tags, params: Params } }, async (request) =>
      withFile(request, 'file', async (upload, file) => {
        const appended = await imports.append(currentAccount(request), await baseOf(request, upload), upload.fields.table_name, file, parseMapping(upload.fields.column_mapping));
        return { success: true, appended };
      }),
    );
    app.post(`${prefix}/update-table-via-excel-csv/`, { config: account, schema: { tags, params: Params } }, async (request) =>
      withFile(request, 'file', async (upload, file) => {
        const result = await imports.update(currentAccount(request), await baseOf(request, upload), upload.fields.table_name, upload.fields.selected_columns, file);
        return { success: true, ...result };
      }),
    );
  };
}
