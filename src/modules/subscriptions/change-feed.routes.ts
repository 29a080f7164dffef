import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, badRequest } from '../../shared/errors.js';
import { baseOf } from '../rows/index.js';
import type { ChangeFeed } from './change-feed.js';
import { parseCursor, type Cursor } from './cursor.js';

const PATH = '/api-gateway/api/v2/dtables/:base_uuid/changes/';
const config = { baseAuth: 'read' } as const;
const tags = ['change feed'];
/** How long one SSE page waits for a change before a keep-alive comment. */
const STREAM_WAIT_MS = 15_000;
/** A stream ends after this long; the client reconnects with Last-Event-ID (every wait has an end). */
const STREAM_MAX_MS = 60 * 60_000;
/** A stalled reader (its socket buffer full) is dropped after this long. */
const DRAIN_TIMEOUT_MS = 30_000;

const Params = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const text = Type.Optional(Type.String({ maxLength: 100_000 }));
const Query = Type.Object({
  after: Type.Optional(Type.String({ maxLength: 40 })),
  limit: Type.Optional(Type.String({ maxLength: 10 })),
  wait: Type.Optional(Type.String({ maxLength: 10 })),
  tables: text,
  columns: text,
  events: text,
  filters: text,
  filter_conjunction: Type.Optional(Type.String({ maxLength: 10 })),
  fire_on: Type.Optional(Type.String({ maxLength: 20 })),
});
const Page = Type.Object({
  changes: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  cursor: Type.String(),
  has_more: Type.Boolean(),
});

/** `GET …/changes/` (JSON page, long poll with `wait`) and its Server-Sent Events form. */
export function changeFeedRoutes(feed: ChangeFeed): FastifyPluginAsyncTypebox {
  return async (app) => {
    const streams = new Set<AbortController>();
    app.addHook('onClose', async () => {
      feed.close();
      for (const stream of streams) stream.abort();
    });

    const serve = async (request: FastifyRequest, reply: FastifyReply, sse: boolean) => {
      const base = baseOf(request);
      const prepared = await feed.prepare(base.id, request.query as Record<string, string | undefined>, request.gateway?.claims.scope?.tables);
      if (!sse) {
        const abort = new AbortController();
        request.raw.once('close', () => abort.abort());
        const page = await feed.read(base.id, prepared.filter, prepared.cursor, prepared.limit, prepared.waitMs, abort.signal);
        return { changes: page.changes, cursor: page.cursor, has_more: page.has_more };
      }
      const lastEventId = request.headers['last-event-id'];
      const resumed = typeof lastEventId === 'string' && lastEventId !== '' ? parseCursor(lastEventId) : prepared.cursor;
      if (!resumed) throw badRequest('Last-Event-ID must be a cursor from this feed');
      await feed.assertKept(base.id, resumed);
      const abort = new AbortController();
      streams.add(abort);
      request.raw.once('close', () => abort.abort());
      reply.hijack();
      try {
        await stream(reply, abort.signal, resumed, (cursor, signal) => feed.read(base.id, prepared.filter, cursor, prepared.limit, STREAM_WAIT_MS, signal));
      } finally {
        streams.delete(abort);
      }
      return reply;
    };

    app.get(PATH, { config, schema: { tags, params: Params, querystring: Query, response: { 200: Page } } }, (request, reply) =>
      serve(request, reply, /text\/event-stream/.test(request.headers.accept ?? '')),
    );
    app.get(`${PATH}stream/`, { config, schema: { tags, params: Params, querystring: Query } }, (request, reply) => serve(request, reply, true));
  };
}

type Read = (cursor: Cursor, signal: AbortSignal) => Promise<{ changes: Array<Record<string, unknown>>; next: Cursor }>;

/** Writes pages as SSE events (`id:` = the cursor after the change) until the client leaves or the stream's time is up. */
async function stream(reply: FastifyReply, signal: AbortSignal, from: Cursor, read: Read): Promise<void> {
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  const write = async (chunk: string) => {
    if (res.write(chunk) || signal.aborted) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        res.destroy();
        resolve();
      }, DRAIN_TIMEOUT_MS);
      res.once('drain', () => {
        clearTimeout(timer);
        resolve();
      });
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  };
  const endAt = performance.now() + STREAM_MAX_MS;
  let cursor = from;
  try {
    await write('retry: 2000\n\n');
    while (!signal.aborted && performance.now() < endAt) {
      const page = await read(cursor, signal);
      for (const change of page.changes) await write(`id: ${String(change.cursor)}\nevent: change\ndata: ${JSON.stringify(change)}\n\n`);
      if (page.changes.length === 0) await write(': keep-alive\n\n');
      cursor = page.next;
    }
  } catch (error) {
    const body = error instanceof AppError ? error.body : { error_msg: 'The change feed stopped; reconnect with Last-Event-ID.' };
    if (!signal.aborted) res.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  } finally {
    res.end();
  }
}
