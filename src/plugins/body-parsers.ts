import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import { multipartParser } from './multipart-parser.js';

/**
 * JSON (built in), urlencoded and multipart bodies all become plain objects on `request.body`:
 * the official clients send all three. Multipart fields become strings; files are not accepted.
 */
export const bodyParsersPlugin = fp<{ bodyLimit: number }>(
  async (app, { bodyLimit }) => {
    await app.register(formbody, { bodyLimit });
    app.addContentTypeParser('multipart/form-data', multipartParser({ maxParts: 100 }));
    // Clients send POST/PUT/DELETE without a body when every field is optional; validate that as `{}`.
    // (A callback hook: no promise per request.)
    app.addHook('preValidation', (request, _reply, done) => {
      if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD') request.body = {};
      done();
    });
  },
  { name: 'body-parsers' },
);
