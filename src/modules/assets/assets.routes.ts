import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { currentAccount } from '../accounts/index.js';
import { apiError } from '../../shared/errors.js';
import type { AssetsService, ServedAsset } from './assets.service.js';
import type { BaseGuard } from './base-guard.js';
import { receiveUpload } from './receive-upload.js';
import { checkAssetPath } from './asset-paths.js';
import { useStreamingMultipart } from './streaming-multipart.js';

/** What every route that receives a file needs: who may touch which base, and the upload limits. */
export interface UploadRouteDeps {
  guard: BaseGuard;
  maxBytes: number;
  tmpDir: string;
  timeoutMs: number;
}

export interface AssetsRouteDeps extends UploadRouteDeps {
  assets: AssetsService;
}

const tags = ['assets'];
const account = { auth: 'account' } as const;
const Loose = Type.Record(Type.String(), Type.Unknown());
const Uuid = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const Named = Type.Object({ workspace_id: Type.String({ maxLength: 32 }), base_name: Type.String({ maxLength: 1024 }) });
const PathQuery = Type.Object({ path: Type.Optional(Type.String({ maxLength: 4096 })) });

/** The original's file and image operations (docs/assets.md). */
export function assetsRoutes({ assets, guard, maxBytes, tmpDir, timeoutMs }: AssetsRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // API-Token (`Token` or `Bearer`): the Python, PHP and JavaScript clients.
    app.get('/api/v2.1/dtable/app-upload-link/', { schema: { tags } }, async (request) =>
      assets.uploadLink(await guard.fromApiToken(request.headers.authorization, 'rw', request.ip)),
    );
    app.get('/api/v2.1/dtable/app-download-link/', { schema: { tags, querystring: PathQuery } }, async (request) => {
      const base = await guard.fromApiToken(request.headers.authorization, 'r', request.ip);
      return assets.downloadLink(base.uuid, request.query.path);
    });
    app.delete('/api/v2.1/dtable/app-asset/', { schema: { tags, querystring: PathQuery } }, async (request) => {
      const base = await guard.fromApiToken(request.headers.authorization, 'rw', request.ip);
      return assets.delete(base.uuid, request.query.path);
    });

    // Base-Token (the console's grid, read-only users and an external link's page, which have no
    // Account-Token for the file URL): a signed link to one file, as app-download-link gives.
    app.get(
      '/api-gateway/api/v2/dtables/:base_uuid/asset-download-link/',
      { config: { baseAuth: 'read', scope: ['files'] }, schema: { tags, params: Uuid, querystring: PathQuery } },
      async (request) => assets.downloadLink(request.gateway!.base.uuid, request.query.path),
    );

    // Account-Token: the web clients.
    app.get(
      '/api/v2.1/workspace/:workspace_id/dtable-asset-upload-link/',
      { config: account, schema: { tags, params: Type.Object({ workspace_id: Type.String({ maxLength: 32 }) }), querystring: Type.Object({ name: Type.String({ maxLength: 1024 }) }) } },
      async (request) => assets.uploadLink(await guard.byName(currentAccount(request), request.params.workspace_id, request.query.name, 'rw')),
    );
    app.get(
      '/api/v2.1/dtable-asset/:base_uuid/',
      { config: account, schema: { tags, params: Uuid, querystring: Type.Object({ parent_dir: Type.Optional(Type.String({ maxLength: 4096 })) }) } },
      async (request) => {
        const base = await guard.byUuid(currentAccount(request), request.params.base_uuid, 'r');
        return assets.list(base.uuid, request.query.parent_dir);
      },
    );
    app.get(
      '/api/v2.1/dtable-recent-asset/:base_uuid/',
      { config: account, schema: { tags, params: Uuid, querystring: Type.Object({ months: Type.Optional(Type.String({ maxLength: 8 })), file_type: Type.Optional(Type.String({ maxLength: 16 })) }) } },
      async (request) => {
        const base = await guard.byUuid(currentAccount(request), request.params.base_uuid, 'r');
        return assets.recent(base.uuid, request.query.months, request.query.file_type);
      },
    );
    app.delete('/api/v2.1/dtable-asset/:base_uuid/', { config: account, schema: { tags, params: Uuid, querystring: PathQuery } }, async (request) => {
      const base = await guard.byUuid(currentAccount(request), request.params.base_uuid, 'rw');
      return assets.delete(base.uuid, request.query.path);
    });
    app.post('/api/v2.1/dtable-asset/:base_uuid/rename/', { config: account, schema: { tags, params: Uuid, body: Loose } }, async (request) => {
      const base = await guard.byUuid(currentAccount(request), request.params.base_uuid, 'rw');
      const body = request.body ?? {};
      return assets.rename(base.uuid, body.path, body.new_name);
    });
    app.delete('/api/v2.1/dtable-asset/:base_uuid/batch-delete-assets/', { config: account, schema: { tags, params: Uuid, body: Loose } }, async (request) => {
      const base = await guard.byUuid(currentAccount(request), request.params.base_uuid, 'rw');
      const body = request.body ?? {};
      return assets.batchDelete(base.uuid, body.parent_path, body.asset_names);
    });
    app.get(
      '/api/v2.1/workspace/:workspace_id/dtable/:base_name/asset-exists/',
      { config: account, schema: { tags, params: Named, querystring: PathQuery } },
      async (request) => {
        const base = await guard.byName(currentAccount(request), request.params.workspace_id, request.params.base_name, 'r');
        return assets.exists(base.uuid, request.query.path);
      },
    );
    // The URL a file cell holds (`…/workspace/{id}/asset/{uuid}/{path}`), with an Account-Token.
    app.get('/workspace/:workspace_id/asset/:base_uuid/*', { config: account, schema: { tags } }, async (request, reply) => {
      const params = request.params as { base_uuid: string; '*': string };
      const base = await guard.byUuid(currentAccount(request), params.base_uuid, 'r');
      return send(reply, await assets.serveFile(base.uuid, checkAssetPath(decodeURIComponent(params['*']), 'path', base.uuid)));
    });

    // The signed links themselves: no credential but the link.
    app.get('/seafhttp/files/:token/:name', { schema: { tags, params: Type.Object({ token: Type.String({ maxLength: 8192 }), name: Type.String() }) } }, async (request, reply) =>
      send(reply, await assets.serve(request.params.token)),
    );
    await app.register(async (scope) => {
      useStreamingMultipart(scope);
      const upload = scope.withTypeProvider<TypeBoxTypeProvider>();
      upload.post(
        '/seafhttp/upload-api/:token',
        { schema: { tags, params: Type.Object({ token: Type.String({ maxLength: 8192 }) }), querystring: Type.Object({ 'ret-json': Type.Optional(Type.String()) }) } },
        async (request, reply) => {
          const link = assets.uploadBase(request.params.token);
          // A deleted base's links die with it.
          const base = link ? await guard.existing(link) : undefined;
          if (!base) throw apiError(403, 'Upload link is invalid or expired.');
          const received = await receiveUpload(request.raw, { maxFileBytes: maxBytes, tmpDir, timeoutMs });
          const stored = await assets.store(base, received);
          if (request.query['ret-json'] === '1') return stored;
          return reply.type('text/plain; charset=utf-8').send(stored[0]!.id);
        },
      );
    });
  };
}

function send(reply: FastifyReply, asset: ServedAsset) {
  return reply.headers(asset.headers).send(asset.body);
}
