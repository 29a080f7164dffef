import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyParsersPlugin } from '../../src/plugins/body-parsers.js';
import { errorHandlerPlugin } from '../../src/plugins/error-handler.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const BOUNDARY = 'MultipartTestBoundary';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

type Part = [name: string, value: string] | { name: string; value: string; extraHeaders: string };

/** A multipart body; a part object carries extra header lines (e.g. a filename or a Content-Type). */
function form(parts: Part[]): string {
  const encoded = parts.map((part) => {
    const { name, value, extraHeaders } = Array.isArray(part) ? { name: part[0], value: part[1], extraHeaders: '' } : part;
    return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${extraHeaders}\r\n\r\n${value}\r\n`;
  });
  return `${encoded.join('')}--${BOUNDARY}--\r\n`;
}

const fields = (count: number) => Array.from({ length: count }, (_, i): Part => [`f${i}`, String(i)]);

/** The body as a stream of `size`-byte chunks. */
function inChunks(body: string, size: number): Readable {
  const bytes = Buffer.from(body);
  return Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));
}

const TOO_LARGE = { error_msg: 'Request body is too large.' };
const MALFORMED = { error_msg: 'Request body is not valid multipart/form-data.' };
const FILES_REFUSED = { error_msg: 'Files are not accepted.' };
const BODY_LIMIT = 16 * 1024;

describe('multipart/form-data parser', () => {
  let app: FastifyInstance;
  /** The raw requests the app has seen, to check nothing is left listening after an abort. */
  const raws: IncomingMessage[] = [];

  beforeAll(async () => {
    app = Fastify({ bodyLimit: BODY_LIMIT });
    await app.register(errorHandlerPlugin);
    await app.register(bodyParsersPlugin, { bodyLimit: BODY_LIMIT });
    app.addHook('onRequest', (request, _reply, done) => {
      raws.push(request.raw);
      done();
    });
    app.post('/echo', async (request) => ({ body: request.body }));
    app.put('/echo', async (request) => ({ body: request.body }));
    app.post('/small', { bodyLimit: 1024 }, async (request) => ({ body: request.body }));
    app.get('/hot', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  const post = (payload: string | Readable, headers: Record<string, string> = { 'content-type': CONTENT_TYPE }, url = '/echo') =>
    app.inject({ method: 'POST', url, headers, payload });
  /** Streamed without Content-Length (chunked transfer encoding), so only counting bytes can stop it. */
  const postChunked = (body: string, size: number) =>
    post(inChunks(body, size), { 'content-type': CONTENT_TYPE, 'transfer-encoding': 'chunked' });

  it('adds no per-request hook but its own preValidation: nothing runs on routes without a multipart body', async () => {
    const bare = Fastify();
    await bare.register(bodyParsersPlugin, { bodyLimit: BODY_LIMIT });
    bare.get('/hot', async () => ({ ok: true }));
    await bare.ready();
    const hooks = [...bare.printRoutes({ includeHooks: true, commonPrefix: false }).matchAll(/\((\w+)\) \[/g)].map((m) => m[1]);
    expect(new Set(hooks)).toEqual(new Set(['preValidation', 'onSend'])); // onSend: Fastify's own, on the HEAD route
    await bare.close();
  });

  it('parses fields into strings, including UTF-8 and empty values', async () => {
    const res = await post(form([['name', 'Grüße, 日本語 ✓'], ['empty', ''], ['spaced', ' a b ']]));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: { name: 'Grüße, 日本語 ✓', empty: '', spaced: ' a b ' } });
  });

  it('parses a body that arrives in small chunks without Content-Length', async () => {
    const res = await postChunked(form([['name', 'Grüße, 日本語 ✓'], ['n', '1']]), 3);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ body: { name: 'Grüße, 日本語 ✓', n: '1' } });
  });

  it('collects a repeated field name into an array, in order', async () => {
    const res = await post(form([['tag', 'a'], ['one', '1'], ['tag', 'b'], ['tag', 'c']]));
    expect(res.json()).toEqual({ body: { tag: ['a', 'b', 'c'], one: '1' } });
  });

  it('treats an empty body as an empty form, and the preValidation hook still gives bodiless requests {}', async () => {
    expect((await post('')).json()).toEqual({ body: {} });
    const bodiless = await app.inject({ method: 'PUT', url: '/echo' });
    expect(bodiless.json()).toEqual({ body: {} });
  });

  it('refuses file parts with 400, with or without a filename', async () => {
    const withName = { name: 'upload', value: 'data', extraHeaders: '; filename="a.txt"\r\nContent-Type: text/plain' };
    const octetStream = { name: 'blob', value: 'data', extraHeaders: '\r\nContent-Type: application/octet-stream' };
    for (const parts of [[withName], [['before', 'x'] as Part, withName], [octetStream]]) {
      const res = await post(form(parts));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(FILES_REFUSED);
    }
  });

  it('accepts 100 fields and refuses 101 with 413', async () => {
    const hundred = await post(form(fields(100)));
    expect(hundred.statusCode).toBe(200);
    expect(Object.keys(hundred.json().body)).toHaveLength(100);
    const tooMany = await post(form(fields(101)));
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json()).toEqual(TOO_LARGE);
  });

  it('refuses a field larger than the body limit with 413, announced or streamed', async () => {
    const body = form([['big', 'x'.repeat(BODY_LIMIT + 1)]]);
    for (const res of [await post(body), await postChunked(body, 4096)]) {
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual(TOO_LARGE);
    }
  });

  it('refuses a body over the limit made of small fields with 413, announced or streamed', async () => {
    const body = form(Array.from({ length: 20 }, (_, i): Part => [`f${i}`, 'y'.repeat(1024)]));
    expect(Buffer.byteLength(body)).toBeGreaterThan(BODY_LIMIT);
    for (const res of [await post(body), await postChunked(body, 1000)]) {
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual(TOO_LARGE);
    }
    // Just under the limit passes.
    const fits = form(Array.from({ length: 10 }, (_, i): Part => [`f${i}`, 'y'.repeat(1024)]));
    expect((await post(fits)).statusCode).toBe(200);
  });

  it("applies the route's own bodyLimit", async () => {
    const body = form([['v', 'z'.repeat(2000)]]);
    expect((await post(body)).statusCode).toBe(200);
    const res = await post(body, undefined, '/small');
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(TOO_LARGE);
  });

  it('answers a Content-Length over the limit at once, without waiting for the body', async () => {
    const never = new Readable({ read() {} }); // a body that never arrives
    const res = await post(never, { 'content-type': CONTENT_TYPE, 'content-length': String(BODY_LIMIT + 1) });
    never.destroy();
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(TOO_LARGE);
  });

  it('answers malformed bodies with 400', async () => {
    const cases: Array<[string, string]> = [
      ['multipart/form-data', form([['a', '1']])], // no boundary
      [CONTENT_TYPE, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated`], // truncated
      [CONTENT_TYPE, 'no boundary in here at all'],
      ['multipart/form-data; boundary=other', form([['a', '1']])], // wrong boundary
      [CONTENT_TYPE, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"`], // headers never end
    ];
    for (const [contentType, payload] of cases) {
      const res = await post(payload, { 'content-type': contentType });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toEqual(MALFORMED);
    }
  });

  it('refuses field names that would shadow Object.prototype', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const res = await post(form([[name, 'x']]));
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toEqual({ error_msg: 'Field name is not allowed.' });
    }
  });

  it('still parses JSON and urlencoded bodies', async () => {
    const json = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1, b: ['x'] } });
    expect(json.json()).toEqual({ body: { a: 1, b: ['x'] } });
    const urlencoded = await post('a=1&b=Gr%C3%BC%C3%9Fe&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(urlencoded.json()).toEqual({ body: { a: '1', b: ['Grüße', '2'] } });
  });

  it('lets go of a request whose client disconnects mid-body, and keeps serving', async () => {
    const before = raws.length;
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    const socket = connect(address.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${CONTENT_TYPE}\r\nContent-Length: 1000\r\n\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\npartial`,
    );
    await expect.poll(() => raws.length).toBe(before + 1);
    const raw = raws[before]!;
    await expect.poll(() => raw.listenerCount('data')).toBeGreaterThan(0); // the parser is reading
    socket.destroy();
    await expect.poll(() => raw.destroyed).toBe(true);
    expect(raw.listenerCount('data')).toBe(0);
    expect(raw.listenerCount('end')).toBe(0);

    const next = await fetch(`http://127.0.0.1:${address.port}/hot`);
    expect(await next.json()).toEqual({ ok: true });
  });
});

describe.each(DIALECTS)('multipart bodies on API routes (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    base = await createBase(t, owner, 'Multipart base');
  });
  afterAll(() => t.close());

  const createToken = (payload: string) =>
    t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, headers: { 'content-type': CONTENT_TYPE }, payload });

  it('creates an API-Token from a multipart body with a UTF-8 name', async () => {
    const res = await createToken(form([['app_name', 'Ünïcødé 日本 ✓'], ['permission', 'r']]));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ app_name: 'Ünïcødé 日本 ✓', permission: 'r' });
  });

  it('answers a file part, too many fields and a malformed body with the error body of the contract', async () => {
    const file = await createToken(form([['app_name', 'x'], { name: 'f', value: 'data', extraHeaders: '; filename="f.bin"' }]));
    expect([file.statusCode, file.json()]).toEqual([400, FILES_REFUSED]);
    const many = await createToken(form(fields(101)));
    expect([many.statusCode, many.json()]).toEqual([413, TOO_LARGE]);
    const truncated = await createToken(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="app_name"\r\n\r\nx`);
    expect([truncated.statusCode, truncated.json()]).toEqual([400, MALFORMED]);
  });

  it('keeps JSON and urlencoded bodies working on the same route', async () => {
    const json = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'json', permission: 'rw' } });
    expect(json.statusCode).toBe(201);
    const urlencoded = await t.request({
      method: 'POST',
      url: basePath(base, 'api-tokens/'),
      token: owner.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'app_name=url%20encoded&permission=r',
    });
    expect(urlencoded.statusCode).toBe(201);
    expect(urlencoded.json()).toMatchObject({ app_name: 'url encoded', permission: 'r' });
  });
});
