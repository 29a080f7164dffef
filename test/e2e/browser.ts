import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config/index.js';
import { WEB_DIST } from '../../src/plugins/web-console.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createPostgresDatabase } from '../helpers/db.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const ADMIN = { email: 'admin@console.test', password: 'admin-password-1' };
export const FAILURES_DIR = path.resolve('test-results/e2e');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 20_000 });
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The real server (API, workers, scheduler, console) on a fresh SQLite file, listening on 127.0.0.1. */
/** `npm install` builds the console; a tree where it was skipped (--ignore-scripts) builds it here once. */
export function ensureConsoleBuilt(): void {
  if (!existsSync(path.join(WEB_DIST, 'index.html'))) execFileSync('npm', ['run', 'build:web'], { stdio: 'inherit', timeout: 120_000 });
}

export async function startConsoleServer(env: Record<string, string> = {}): Promise<{ server: RunningServer; url: string }> {
  ensureConsoleBuilt();
  // A test that must know the address first (an identity provider's redirect URI) passes PORT.
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig(
    {
      SECRET_KEY: 'e2e-secret-key-e2e-secret-key-0123456789',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-e2e-')),
      PUBLIC_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      ...env,
    },
    { persistSecret: false },
  );
  // A test that brings its own database (DATABASE_URL) keeps it.
  const database = env.DATABASE_URL ? undefined : await e2eDatabase();
  const server = await startServer(database ? { ...config, databaseUrl: database.url } : config, ['api', 'worker', 'scheduler']).catch(async (error: unknown) => {
    await database?.drop();
    throw error;
  });
  if (!database) return { server, url };
  const stop = server.stop.bind(server);
  return { server: Object.assign(server, { stop: () => stop().finally(() => database.drop()) }), url };
}

/**
 * With TEST_DIALECTS=postgres and TEST_DATABASE_URL (as for the other suites), a console server runs on a
 * PostgreSQL database of its own, created here and dropped when the server stops; otherwise on SQLite.
 * Without Redis: console servers run side by side, and their users and bases share ids across databases.
 */
async function e2eDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  if (!process.env.TEST_DATABASE_URL || process.env.TEST_DIALECTS?.trim() !== 'postgres') return undefined;
  return createPostgresDatabase();
}

/**
 * What a page did lately, for a failed step's message: its console errors and warnings, uncaught errors,
 * failed requests, answers of 400 or more and socket frames' opening and closing, each with the time since
 * the page was opened. A flake on a loaded CI run leaves only that log behind, so it must say what the page saw.
 */
const journals = new WeakMap<Page, string[]>();
const JOURNAL_LINES = 60;

function keepJournal(page: Page): string[] {
  const existing = journals.get(page);
  if (existing) return existing;
  const lines: string[] = [];
  journals.set(page, lines);
  const opened = Date.now();
  const note = (text: string) => {
    lines.push(`+${((Date.now() - opened) / 1000).toFixed(1)}s ${text.slice(0, 300)}`);
    if (lines.length > JOURNAL_LINES) lines.shift();
  };
  const short = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') note(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => note(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => note(`failed ${r.method()} ${short(r.url())}: ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) note(`${r.status()} ${r.request().method()} ${short(r.url())}`);
  });
  page.on('websocket', (ws) => {
    note(`socket open ${short(ws.url())}`);
    ws.on('close', () => note(`socket closed ${short(ws.url())}`));
    ws.on('socketerror', (e) => note(`socket error ${short(ws.url())}: ${e}`));
  });
  // Listening from the page's start also turns Chromium's file chooser interception on before any key
  // press: enabled only by a `waitForEvent('filechooser')` beside the press, it raced the press (a CI run's
  // Space on the chooser opened a real, invisible dialog and no event came).
  page.on('filechooser', () => note('file chooser opened'));
  return lines;
}

/** Where the focus is and what the page's journal holds, appended to a failed step's error. */
async function pageState(page: Page): Promise<string> {
  const focus = await page
    .evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return 'body';
      const label = e.getAttribute('aria-label') ?? e.getAttribute('name') ?? (e.textContent ?? '').trim().slice(0, 40);
      return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(/\s+/).join('.')}` : ''} "${label}"`;
    })
    .catch((error: unknown) => `unknown (${String(error).slice(0, 100)})`);
  const journal = journals.get(page) ?? [];
  return [`page: ${page.url()}`, `focus: ${focus}`, `journal (${journal.length} entries):`, ...journal.map((l) => `  ${l}`)].join('\n');
}

/**
 * Runs a browser step; on failure saves a full-page screenshot under test-results/e2e and adds the page's
 * focus and journal (keepJournal) to the error before rethrowing.
 */
export async function step<T>(page: Page, name: string, fn: () => Promise<T>): Promise<T> {
  keepJournal(page);
  try {
    return await fn();
  } catch (error) {
    mkdirSync(FAILURES_DIR, { recursive: true });
    await page.screenshot({ path: path.join(FAILURES_DIR, `${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
    const state = await pageState(page);
    writeFileSync(path.join(FAILURES_DIR, `${name.replace(/\W+/g, '-')}.txt`), `${String(error)}\n${state}\n`);
    if (error instanceof Error) error.message = `${error.message}\n[step ${name}] ${state}`;
    throw error;
  }
}

/** A new page for a console test: 10 s for each wait instead of playwright's 30 s, its journal kept from the start. */
export async function newConsolePage(browser: Browser, options: BrowserContextOptions): Promise<Page> {
  const page = await browser.newPage(options);
  page.setDefaultTimeout(10_000);
  keepJournal(page);
  return page;
}

/** A console test's afterAll: the browser, then the server (either may not have started). */
export async function closeConsole(browser: Browser | undefined, server: RunningServer | undefined): Promise<void> {
  await browser?.close();
  await server?.stop();
}

export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export type ApiCall = <T>(path: string, init?: { method?: string; body?: unknown; token?: string }) => Promise<{ status: number; data: T }>;

/** JSON calls to the server under test, with `token()` (an Account-Token) unless a call names another. */
export function apiCaller(url: () => string, token: () => string): ApiCall {
  return async <T>(path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
    const res = await fetch(url() + path, {
      method: init.method ?? 'GET',
      headers: { authorization: `Token ${init.token ?? token()}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    return { status: res.status, data: (await res.json()) as T };
  };
}

/** The first admin's Account-Token on a console server (startConsoleServer). */
export async function adminSignIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) });
  return ((await res.json()) as { token: string }).token;
}

/** Creates a base named `name` for the caller and answers its workspace id and uuid. */
export async function createBase(call: ApiCall, name: string): Promise<{ workspaceId: number; baseUuid: string }> {
  const created = await call('/api/v2.1/dtables/', { method: 'POST', body: { name } });
  if (created.status >= 300) throw new Error(`creating the base ${name}: ${created.status}`);
  const list = await call<{ workspace_list: Array<{ table_list?: Array<{ name: string; uuid: string; workspace_id: number }> }> }>('/api/v2.1/workspaces/');
  const base = list.data.workspace_list.flatMap((w) => w.table_list ?? []).find((b) => b.name === name)!;
  return { workspaceId: base.workspace_id, baseUuid: base.uuid };
}

/** Calls to a base's gateway routes, each with a Base-Token fetched for it through `call` (an Account-Token). */
export function gatewayCaller(call: ApiCall, base: () => { name: string; workspaceId: number; baseUuid: string }) {
  return async <T>(suffix: string, init: { method?: string; body?: unknown } = {}) => {
    const { name, workspaceId, baseUuid } = base();
    const token = (await call<{ access_token: string }>(`/api/v2.1/workspace/${workspaceId}/dtable/${encodeURIComponent(name)}/access-token/`)).data.access_token;
    return call<T>(`/api-gateway/api/v2/dtables/${baseUuid}/${suffix}`, { ...init, token });
  };
}

/** A row as the gateway answers it with `convert_keys`. */
export type ApiRow = Record<string, unknown> & { _id: string };

/**
 * What a console suite shares between its tests: the server, the browser and its page, the first admin's
 * Account-Token and one base named `baseName`. A suite makes one, calls `start` (and `createBase`,
 * `openPage`) in its beforeAll and `close` in its afterAll; `call` and `gw` reach the API meanwhile.
 */
export class ConsoleSuite {
  server!: RunningServer;
  url = '';
  browser!: Browser;
  page!: Page;
  adminToken = '';
  workspaceId = 0;
  baseUuid = '';
  /** JSON calls with the admin's Account-Token (or a token a call names). */
  readonly call: ApiCall = apiCaller(() => this.url, () => this.adminToken);
  /** Calls to the base's gateway routes. */
  readonly gw = gatewayCaller(this.call, () => ({ name: this.baseName, workspaceId: this.workspaceId, baseUuid: this.baseUuid }));

  constructor(readonly baseName: string) {}

  /** Starts the server (startConsoleServer's `env`) and the browser, and signs the first admin in over the API. */
  async start(env: Record<string, string> = {}): Promise<void> {
    ({ server: this.server, url: this.url } = await startConsoleServer(env));
    this.browser = await launchBrowser();
    this.adminToken = await adminSignIn(this.url);
  }

  /** Creates the suite's base for the admin. */
  async createBase(): Promise<void> {
    ({ workspaceId: this.workspaceId, baseUuid: this.baseUuid } = await createBase(this.call, this.baseName));
  }

  /** A table's rows through the gateway, keyed by column name. */
  async rowsOf(table: string): Promise<ApiRow[]> {
    return (await this.gw<{ rows: ApiRow[] }>(`rows/?table_name=${encodeURIComponent(table)}&convert_keys=true`)).data.rows;
  }

  /** The base's Table1 with a number column `Qty` beside `Name`, holding exactly `rows` (its blank starting rows deleted). */
  async seedQtyTable(rows: Array<{ Name: string; Qty: number }>): Promise<void> {
    const added = await this.gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: 'Qty', column_type: 'number' } });
    if (added.status !== 200) throw new Error(`adding the Qty column: ${added.status}`);
    const blank = await this.rowsOf('Table1');
    await this.gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.map((r) => r._id) } });
    const appended = await this.gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows } });
    if (appended.status !== 200) throw new Error(`appending the rows: ${appended.status}`);
  }

  /** Opens the suite's page (newConsolePage) and, unless told not to, signs the admin in on it. */
  async openPage(options: BrowserContextOptions, { signedIn = true } = {}): Promise<Page> {
    this.page = await newConsolePage(this.browser, options);
    if (signedIn) await signIn(this.page, this.url, ADMIN.email, ADMIN.password);
    return this.page;
  }

  /** The page of the suite's base in the console. */
  get baseUrl(): string {
    return `${this.url}/#/base/${this.workspaceId}/${encodeURIComponent(this.baseName)}`;
  }

  /** The afterAll: the browser, then the server (either may not have started). */
  close(): Promise<void> {
    return closeConsole(this.browser, this.server);
  }
}
