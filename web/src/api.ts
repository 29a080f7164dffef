/** The console's only way to the server: the public API, with the caller's Account- or Base-Token. */
import { t } from './i18n';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'basegate.account-token';
/** Dispatched on window when the server no longer accepts the session's Account-Token. */
export const SESSION_ENDED = 'basegate:session-ended';

/** The Account-Token lives in session storage: gone with the tab, never in a URL. */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** The last rate-limit headers seen on a base request, for the integrations page. */
export const rateLimitSeen: { limit?: string; remaining?: string; reset?: string } = {};

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  /** Defaults to the signed-in user's Account-Token. */
  token?: string | null;
  signal?: AbortSignal;
  /** Extra request headers (e.g. `X-Link-Password`). */
  headers?: Record<string, string>;
  /** A multipart body (file uploads) instead of a JSON `body`. */
  form?: FormData;
}

const TIMEOUT_MS = 30_000;
/** Uploads and downloads of whole files may take longer than a request. */
const FILE_TIMEOUT_MS = 5 * 60_000;

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options, options.form ? FILE_TIMEOUT_MS : TIMEOUT_MS);
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) throw new ApiError(response.status, errorMessage(data, response.status));
  return data as T;
}

/** A file the server answers (an export): its bytes and the name from `Content-Disposition`. */
export async function apiDownload(path: string, fallbackName: string, options: Pick<RequestOptions, 'token'> = {}): Promise<{ blob: Blob; filename: string }> {
  const response = await send(path, options, FILE_TIMEOUT_MS);
  if (!response.ok) {
    const text = await response.text();
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
    throw new ApiError(response.status, errorMessage(data, response.status));
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  const plain = /filename="?([^";]+)"?/i.exec(disposition);
  const filename = star ? decodeURIComponent(star[1]!) : (plain?.[1] ?? fallbackName);
  return { blob: await response.blob(), filename };
}

/** One request with the token, a timeout until the answer's headers, and the session check. */
async function send(path: string, options: RequestOptions, timeoutMs: number): Promise<Response> {
  const token = options.token === undefined ? tokenStore.get() : options.token;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (token) headers.authorization = `Token ${token}`;
  if (options.body !== undefined && !options.form) headers['content-type'] = 'application/json';
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  options.signal?.addEventListener('abort', () => controller.abort());
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? (options.form ? 'POST' : 'GET'),
      headers,
      body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      signal: controller.signal,
    });
  } catch (err) {
    throw new ApiError(0, t(controller.signal.aborted ? 'request.timeout' : 'request.unreachable'));
  } finally {
    clearTimeout(timer);
  }
  if (path.startsWith('/api-gateway/')) {
    rateLimitSeen.limit = response.headers.get('x-ratelimit-limit') ?? rateLimitSeen.limit;
    rateLimitSeen.remaining = response.headers.get('x-ratelimit-remaining') ?? rateLimitSeen.remaining;
    rateLimitSeen.reset = response.headers.get('x-ratelimit-reset') ?? rateLimitSeen.reset;
  }
  // The Account-Token was rotated or revoked elsewhere (password change, sign-out in another tab):
  // end the session so the console asks to sign in again instead of failing request by request.
  if (response.status === 401 && token && token === tokenStore.get()) {
    tokenStore.clear();
    window.dispatchEvent(new Event(SESSION_ENDED));
  }
  return response;
}

/** Every error body the API uses: error_msg, detail, error_message, DRF field lists. */
export function errorMessage(data: unknown, status: number): string {
  if (data && typeof data === 'object') {
    const d = data as Record<string, unknown>;
    for (const key of ['error_msg', 'detail', 'error_message']) {
      if (typeof d[key] === 'string' && d[key]) return d[key] as string;
    }
    for (const value of Object.values(d)) {
      if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
    }
  }
  if (typeof data === 'string' && data.length > 0 && data.length < 300) return data;
  return t('request.failed', { status });
}

export const enc = encodeURIComponent;

/** Path of a base's dtable-web endpoints. */
export function basePath(workspaceId: number | string, baseName: string, suffix = ''): string {
  return `/api/v2.1/workspace/${enc(String(workspaceId))}/dtable/${enc(baseName)}/${suffix}`;
}
