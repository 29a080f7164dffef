import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentAccount } from '../accounts/index.js';
import { badRequest } from '../../shared/errors.js';
import { discardUpload, receiveUpload, useStreamingMultipart, type UploadRouteDeps } from '../assets/index.js';
import { baseRecord } from '../workspaces/index.js';
import type { ArchiveService } from './archive.service.js';
import { attachment } from './export.routes.js';

export interface ArchiveRouteDeps extends UploadRouteDeps {
  archives: ArchiveService;
}

const tags = ['import and export'];
const account = { auth: 'account' } as const;
const Params = Type.Object({ workspace_id: Type.String({ maxLength: 32 }) });

/** `synchronous-export/export-dtable` and `import-dtable`: a whole base as one file. */
export function archiveRoutes({ archives, guard, maxBytes, tmpDir, timeoutMs }: ArchiveRouteDeps): FastifyPluginAsyncTypebox {
  return async (scope) => {
    useStreamingMultipart(scope);
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/api/v2.1/workspace/:workspace_id/synchronous-export/export-dtable/',
      { config: account, schema: { tags, params: Params, querystring: Type.Object({ dtable_name: Type.String({ maxLength: 1024 }), ignore_asset: Type.Optional(Type.String({ maxLength: 8 })) }) } },
      async (request, reply) => {
        const base = await guard.byName(currentAccount(request), request.params.workspace_id, request.query.dtable_name, 'r');
        const ignore = ['true', '1', 'True'].includes(request.query.ignore_asset ?? '');
        const body = new PassThrough();
        archives.export(base, !ignore, body).catch((error: unknown) => {
          request.log.error({ err: error }, 'base export failed mid-stream');
          body.destroy(error as Error);
        });
        return reply.header('content-type', 'application/x-zip-compressed').header('content-disposition', attachment(`${base.name}.dtable`)).send(body);
      },
    );
    app.post('/api/v2.1/workspace/:workspace_id/import-dtable/', { config: account, schema: { tags, params: Params } }, async (request) => {
      const upload = await receiveUpload(request.raw, { maxFileBytes: maxBytes, tmpDir, timeoutMs });
      try {
        if (!upload.file || upload.file.field !== 'dtable') throw badRequest('dtable invalid.');
        const stem = upload.file.filename.replace(/\.[^.]*$/, '').replace(/[/\\]/g, '_').trim() || 'Imported';
        const base = await archives.import(currentAccount(request), request.params.workspace_id, upload.file.tempFile, stem);
        return { task_id: randomUUID(), table: baseRecord(base) };
      } finally {
        await discardUpload(upload);
      }
    });
  };
}
