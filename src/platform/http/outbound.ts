import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { processStopping } from '../../shared/shutdown.js';
import { blockedAddressReason } from './ip-policy.js';

/**
 * The port for outbound HTTP POSTs (webhook delivery). One call = one attempt: no redirects are
 * followed, at most `maxResponseBytes` of the answer are read, and every failure comes back as a
 * classified value instead of an exception.
 */
export interface OutboundHttp {
  post(url: string, headers: Record<string, string>, body: string): Promise<OutboundResult>;
  close(): Promise<void>;
}

export type OutboundErrorKind = 'blocked' | 'dns' | 'connect' | 'timeout' | 'tls' | 'invalid_url' | 'network';

export type OutboundResult =
  | {
      ok: true;
      status: number;
      headers: Record<string, string>;
      /** The first `maxResponseBytes` of the body, decoded as UTF-8. */
      body: string;
      truncated: boolean;
      durationMs: number;
    }
  | { ok: false; kind: OutboundErrorKind; message: string; durationMs: number };

export interface OutboundHttpOptions {
  /** Whole-attempt limit: connect + send + headers + body. */
  timeoutMs: number;
  /** false (default) refuses loopback, private, link-local, unique-local and metadata addresses. */
  allowPrivate: boolean;
  maxResponseBytes?: number;
  /** Connections kept per origin (keep-alive pool). */
  connectionsPerOrigin?: number;
}

export const MAX_RESPONSE_BYTES = 64 * 1024;

class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(host: string, address: string, reason: string) {
    super(`refused: ${host} resolves to ${address} (${reason}); set WEBHOOK_ALLOW_PRIVATE=true to allow`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves, then refuses blocked addresses. Checking the address
 * the socket will really use (not a separate pre-resolution) closes the DNS-rebinding gap.
 */
function guardedLookup(hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
    if (err) return callback(err, options.all ? [] : '');
    for (const entry of addresses) {
      const reason = blockedAddressReason(entry.address);
      if (reason) return callback(new BlockedAddressError(hostname, entry.address, reason), options.all ? [] : '');
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    callback(null, first.address, first.family);
  });
}

/** Attempts in flight in this process, aborted together when the process begins to stop. */
const inFlight = new Set<AbortController>();
/** Signals aborted by the stop (not by their deadline). */
const stoppedAttempts = new WeakSet<AbortSignal>();

function stopAttempt(controller: AbortController): void {
  if (controller.signal.aborted) return; // its deadline came first
  stoppedAttempts.add(controller.signal);
  controller.abort(processStopping.reason);
}

processStopping.addEventListener(
  'abort',
  () => {
    for (const controller of inFlight) stopAttempt(controller);
    inFlight.clear();
  },
  { once: true },
);

export function createOutboundHttp(options: OutboundHttpOptions): OutboundHttp {
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? 8,
    connect: { timeout: options.timeoutMs, ...(options.allowPrivate ? {} : { lookup: guardedLookup }) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
  });

  async function post(url: string, headers: Record<string, string>, body: string): Promise<OutboundResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('scheme');
    } catch {
      return { ok: false, kind: 'invalid_url', message: 'invalid URL', durationMs: elapsed() };
    }
    // net.connect skips `lookup` for IP literals, so those are judged here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivate && isIP(literal) !== 0) {
      const reason = blockedAddressReason(literal);
      if (reason) {
        const message = new BlockedAddressError(target.hostname, literal, reason).message;
        return { ok: false, kind: 'blocked', message, durationMs: elapsed() };
      }
    }
    // One deadline for the whole attempt (undici's own timeouts are per phase).
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(new DOMException('deadline', 'TimeoutError')), options.timeoutMs);
    // A stop of the process aborts the attempt too (it is retried after the restart). One listener
    // for all attempts in flight (cheaper than AbortSignal.any per attempt).
    if (processStopping.aborted) stopAttempt(controller);
    else inFlight.add(controller);
    const signal = controller.signal;
    try {
      const response = await request(target, { method: 'POST', headers, body, dispatcher: agent, signal });
      const { text, truncated } = await readCapped(response.body, maxBytes);
      return {
        ok: true,
        status: response.statusCode,
        headers: flattenHeaders(response.headers),
        body: text,
        truncated,
        durationMs: elapsed(),
      };
    } catch (error) {
      if (stoppedAttempts.has(signal)) {
        return { ok: false, kind: 'network', message: 'aborted: the server is stopping (retried later)', durationMs: elapsed() };
      }
      const { kind, message } = classify(error, options.timeoutMs);
      return { ok: false, kind, message, durationMs: elapsed() };
    } finally {
      clearTimeout(deadline);
      inFlight.delete(controller);
    }
  }

  return { post, close: () => agent.close() };
}

/** Read at most `max` bytes, then drop the rest of the stream (the connection goes with it). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const room = max - size;
    if (chunk.length >= room) {
      if (room > 0) chunks.push(chunk.subarray(0, room));
      size = max;
      truncated = chunk.length > room;
      if (truncated) break;
      continue;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  if (truncated) body.destroy();
  // A cut in the middle of a multi-byte character decodes to U+FFFD, which is fine for a log.
  return { text: Buffer.concat(chunks).toString('utf8'), truncated };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

function classify(error: unknown, timeoutMs: number): { kind: OutboundErrorKind; message: string } {
  const chain: Array<{ code?: string; name?: string; message?: string }> = [];
  for (let e = error as { cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) chain.push(e as never);
  const codes = chain.map((e) => e.code ?? '');
  const has = (...wanted: string[]) => codes.some((c) => wanted.includes(c));
  const detail = chain.map((e) => e.message).find((m) => m) ?? 'request failed';
  if (has('EBLOCKEDADDRESS')) return { kind: 'blocked', message: detail };
  if (
    has('UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ABORT_ERR', 'ERR_ABORTED') ||
    chain.some((e) => e.name === 'TimeoutError' || e.name === 'AbortError')
  ) {
    return { kind: 'timeout', message: `no complete response within ${timeoutMs} ms` };
  }
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME')) return { kind: 'dns', message: `DNS lookup failed: ${detail}` };
  if (has('ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED')) {
    return { kind: 'connect', message: `connection failed: ${detail}` };
  }
  if (codes.some((c) => TLS_CODES.test(c))) return { kind: 'tls', message: `TLS error: ${detail}` };
  return { kind: 'network', message: detail };
}
