import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { apiError, type AppError } from '../shared/errors.js';

export type MultipartBody = Record<string, string | string[]>;

const tooLarge = () => apiError(413, 'Request body is too large.');
const malformed = () => apiError(400, 'Request body is not valid multipart/form-data.');

/**
 * Content-type parser for `multipart/form-data` (register with `addContentTypeParser`, so it costs
 * nothing on requests without such a body). Fields become strings on `request.body`, a repeated
 * name an array of them; an empty body is `{}`. Files are refused (400), as are more than
 * `maxParts` parts and bodies over the route's bodyLimit (413), which Fastify does not enforce for
 * stream parsers. A malformed body, or one the client abandons, is a 400.
 */
export function multipartParser({ maxParts }: { maxParts: number }) {
  return (request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: MultipartBody) => void) => {
    const limit = request.routeOptions.bodyLimit;
    if (Number(request.headers['content-length']) > limit) return done(tooLarge());

    const body: MultipartBody = {};
    let received = 0;
    let settled = false;
    let busboy: BusboyInstance;
    try {
      busboy = new Busboy({
        headers: { 'content-type': request.headers['content-type'] ?? '' },
        // fieldSize: a field cannot outgrow the body, but busboy's 1 MB default would silently truncate.
        limits: { fieldSize: limit, fields: maxParts, parts: maxParts, files: 0 },
      });
    } catch {
      return done(malformed()); // no boundary
    }

    const settle = (error: AppError | null) => {
      if (settled) return;
      settled = true;
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onAbort);
      payload.removeListener('close', onClose);
      payload.resume(); // discard whatever is left of a refused body
      if (error) done(error);
      else done(null, body);
    };

    function onData(chunk: Buffer) {
      received += chunk.length;
      if (received > limit) return settle(tooLarge());
      if (!busboy.write(chunk)) {
        payload.pause();
        busboy.once('drain', () => payload.resume());
      }
    }
    function onEnd() {
      if (received === 0) settle(null);
      else busboy.end();
    }
    function onAbort() {
      settle(malformed());
    }
    function onClose() {
      // 'close' before 'end': the client went away mid-body.
      if (!payload.readableEnded) settle(malformed());
    }

    busboy
      .on('field', (name, value) => {
        if (name in Object.prototype) return settle(apiError(400, 'Field name is not allowed.'));
        const previous = body[name];
        if (previous === undefined) body[name] = value;
        else if (Array.isArray(previous)) previous.push(value);
        else body[name] = [previous, value];
      })
      .on('filesLimit', () => settle(apiError(400, 'Files are not accepted.')))
      .on('fieldsLimit', () => settle(tooLarge()))
      .on('partsLimit', () => settle(tooLarge()))
      .on('error', () => settle(malformed()))
      .on('finish', () => settle(null));

    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onAbort);
    payload.on('close', onClose);
  };
}
