import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';

/**
 * JSON (built in), urlencoded and multipart bodies all become plain objects on `request.body`:
 * the official clients send all three. Multipart fields become strings; files are not accepted.
 */
export const bodyParsersPlugin = fp<{ bodyLimit: number }>(
  async (app, { bodyLimit }) => {
    await app.register(formbody, { bodyLimit });
    await app.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fieldSize: bodyLimit, fields: 100, files: 0, parts: 100 },
    });
    // Clients send POST/PUT/DELETE without a body when every field is optional; validate that as `{}`.
    app.addHook('preValidation', async (request) => {
      if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD') request.body = {};
    });
  },
  { name: 'body-parsers' },
);
