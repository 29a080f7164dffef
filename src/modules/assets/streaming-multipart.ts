import type { FastifyInstance } from 'fastify';

/**
 * For routes that read a multipart body as a stream themselves (`receive-upload.ts`): the app-wide
 * parser turns bodies into plain objects with a size limit; here the body is left unread for the
 * handler, which enforces its own limits. Call on an encapsulated plugin's instance.
 */
export function useStreamingMultipart(app: FastifyInstance): void {
  app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));
}
