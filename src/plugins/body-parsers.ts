import { parse as parseQueryString } from 'node:querystring';
import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import { DEFAULT_JSON_SHAPE, jsonShapeRefusal, type JsonShapeLimits } from './json-shape.js';
import { multipartParser } from './multipart-parser.js';

/**
 * JSON, urlencoded and multipart bodies all become plain objects on `request.body`:
 * the official clients send all three. Multipart fields become strings; files are not accepted.
 *
 * The official clients send `Content-Type: application/json` on every request, also a DELETE with an
 * empty body, so a JSON or form body that is empty or only whitespace means "no body" (never a 400).
 * A JSON body's shape is bounded before it is parsed (json-shape.ts); form bodies keep at most 1,000
 * fields (querystring's `maxKeys`), multipart bodies 100 parts.
 */
export const bodyParsersPlugin = fp<{ bodyLimit: number; jsonShape?: JsonShapeLimits }>(
  async (app, { bodyLimit, jsonShape = DEFAULT_JSON_SHAPE }) => {
    const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body as string;
      if (isBlank(text)) return done(null, undefined);
      const refusal = jsonShapeRefusal(text, jsonShape);
      if (refusal !== null) return done(Object.assign(new Error(refusal), { statusCode: 400 }), undefined);
      parseJson(request, text, done);
    });
    await app.register(formbody, { bodyLimit, parser: (text) => (isBlank(text) ? {} : parseQueryString(text)) });
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

function isBlank(text: string): boolean {
  return text.trim() === '';
}
