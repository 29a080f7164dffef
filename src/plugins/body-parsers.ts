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
  },
  { name: 'body-parsers' },
);
