import { BlockList, isIP } from 'node:net';

/**
 * Token scopes, pure: what a scoped API-Token (and every Base-Token issued from it) may touch beyond
 * its `r`/`rw` permission. A scope only narrows: an absent dimension means "no restriction", so a
 * token without scope behaves exactly as before. Every check of a scope goes through `scopeRefusal`.
 */
export const TOKEN_OPERATIONS = ['read_rows', 'write_rows', 'structure', 'sql', 'comments', 'files'] as const;
export type TokenOperation = (typeof TOKEN_OPERATIONS)[number];

export interface TokenScope {
  /** Table names or ids the token may touch; absent = every table. */
  tables?: string[];
  /** Operations it may perform; absent = every operation its permission allows. */
  operations?: TokenOperation[];
  /** Client networks (CIDR or single addresses) it may be used from; absent = anywhere. */
  networks?: string[];
  /**
   * One view of one table (ids), for Base-Tokens issued through a view share: row listings are that
   * view's rows (its filters, its hidden columns hidden); `tables` then names only that table.
   */
  view?: { table: string; view: string };
}

/** What one request asks of a scope. */
export interface ScopeNeed {
  /** Any one of these operations suffices (reading structure is allowed to row readers and structure editors); absent = none asked (exchanging the token). */
  operations?: readonly TokenOperation[];
  /** The tables the request names (by name or id); empty when it names none. */
  tables?: readonly string[];
  /** True when the request reaches every table of the base at once (the live channel's room). */
  allTables?: boolean;
  /** The client address, checked against `networks`. */
  ip?: string;
  /** For a gateway route: whether it is open to a view-limited token (row listings and row writes only). */
  viewOpen?: boolean;
}

export const MAX_SCOPE_TABLES = 100;
export const MAX_SCOPE_NETWORKS = 50;

export function isTokenOperation(value: unknown): value is TokenOperation {
  return typeof value === 'string' && (TOKEN_OPERATIONS as readonly string[]).includes(value);
}

/** True when the scope restricts nothing (the token is an unscoped, compatible one). */
export function isUnscoped(scope: TokenScope | null | undefined): boolean {
  return !scope || (!scope.tables && !scope.operations && !scope.networks && !scope.view);
}

/**
 * Why the scope refuses the request — a sentence naming what is missing — or null when it allows it.
 * The one place a token scope is judged (REST, SQL, comments, file links, the live channel).
 */
export function scopeRefusal(scope: TokenScope | null | undefined, need: ScopeNeed): string | null {
  if (!scope) return null;
  if (scope.networks && (need.ip === undefined || !inNetworks(scope.networks, need.ip))) {
    return `The token may not be used from ${need.ip ?? 'this client'}: its allowed networks do not include it.`;
  }
  // (The live channel asks for every table and names no route: `viewOpen` undefined.)
  if (scope.view && need.allTables && need.viewOpen === undefined) return "The token is limited to one view: the live channel (every table's changes) is not open to it.";
  if (scope.view && need.viewOpen === false) return 'The token is limited to one view: only its rows can be listed (and written).';
  if (scope.operations && need.operations && !anyAllowed(scope.operations, need.operations)) {
    return `The token's scope lacks the operation ${need.operations.join(' or ')}.`;
  }
  if (scope.tables) {
    if (need.allTables) return "The token's scope is limited to some tables; this needs access to every table.";
    if (need.tables) {
      for (const table of need.tables) {
        if (!listedInScope(scope.tables, table)) return tableRefusal(table);
      }
    }
  }
  return null;
}

/** Whether the scope allows one of the operations asked (plain loops: this runs on every scoped call). */
function anyAllowed(allowed: readonly TokenOperation[], asked: readonly TokenOperation[]): boolean {
  for (const op of asked) if (allowed.includes(op)) return true;
  return false;
}

/** Whether a table, as a request spells it (name or id), is listed by a table scope as spelled: then it is in scope. */
export function listedInScope(tables: readonly string[], table: string): boolean {
  return tables.includes(table);
}

/** A table as a scope sees it: listed by id or by name. */
export interface ScopeTable {
  _id: string;
  name: string;
}

/** Whether a table-scoped token may touch `table` (listed by its id or its present name); true when not table-scoped. */
export function tableInScope(scope: TokenScope | null | undefined, table: ScopeTable): boolean {
  return !scope?.tables || scope.tables.includes(table._id) || scope.tables.includes(table.name);
}

/** The ids of the base's `tables` a table-scoped token may touch; undefined when the token is not table-scoped. */
export function scopeTableIds(scope: TokenScope | null | undefined, tables: readonly ScopeTable[]): string[] | undefined {
  if (!scope?.tables) return undefined;
  return tables.filter((t) => tableInScope(scope, t)).map((t) => t._id);
}

/**
 * The tables a request names (names or ids) that lie outside a table-scoped token's scope, once each is
 * resolved against the base's tables: a table named by id is in scope when the scope lists its name,
 * and the other way round. Names of no table of the base stay outside (judged as the request spelled them).
 */
export function namedOutsideScope(scope: TokenScope | null | undefined, named: readonly string[], tables: readonly ScopeTable[]): string[] {
  if (!scope?.tables) return [];
  return named.filter((ref) => {
    if (scope.tables!.includes(ref)) return false;
    const table = tables.find((t) => t._id === ref) ?? tables.find((t) => t.name === ref);
    return table === undefined || !tableInScope(scope, table);
  });
}

/** A column as a table scope judges it: what other table it reads. */
export interface ScopeColumn {
  key: string;
  /** A link column: the table at its other end (`undefined` name when that table is gone). */
  reaches?: { _id: string; name?: string };
  /** A column computed through a link column (lookup, rollup, count_links, findmin, findmax): that column's key. */
  through?: string;
  /** A formula column: the keys of the columns it reads (a formula over a hidden column shows what it hides). */
  reads?: readonly string[];
}

/**
 * The columns of a table a table-scoped token may not read, each with the table outside its scope it
 * would show (key → that table's id): link columns to a table outside the scope, and the columns computed
 * through them. Their cells are left out of every row a scoped token reads, as a view's hidden columns
 * are, and naming them (filters, sorts, `query-links/`) is refused naming that table. Like a fine-grained
 * token without access to a repository: the rows of the scope's tables are readable, what they point to
 * outside it is not — not its ids, not its display values. Empty when the token is not table-scoped.
 */
export function columnsBeyondScope(scope: TokenScope | null | undefined, columns: readonly ScopeColumn[]): Map<string, string> {
  const beyond = new Map<string, string>();
  if (!scope?.tables) return beyond;
  for (const c of columns) {
    if (c.reaches && !(scope.tables.includes(c.reaches._id) || (c.reaches.name !== undefined && scope.tables.includes(c.reaches.name)))) beyond.set(c.key, c.reaches._id);
  }
  for (const c of columns) {
    const table = c.through === undefined ? undefined : beyond.get(c.through);
    if (table !== undefined) beyond.set(c.key, table);
  }
  // Formulas read other formulas: hide until nothing more is hidden (at most one pass per column).
  for (let changed = beyond.size > 0, pass = 0; changed && pass <= columns.length; pass++) {
    changed = false;
    for (const c of columns) {
      if (!c.reads || beyond.has(c.key)) continue;
      const read = c.reads.find((key) => beyond.has(key));
      if (read !== undefined) {
        beyond.set(c.key, beyond.get(read)!);
        changed = true;
      }
    }
  }
  return beyond;
}

/** The refusal for a table outside the scope (the sentence every table refusal uses). */
export function tableRefusal(table: string): string {
  return `The token's scope lacks the table ${table}.`;
}

/**
 * The scope of a Base-Token issued through a view share: the view's table only, rows read (and written
 * for `rw`) and SQL — both limited to the view's rows and visible columns by the routes that admit it
 * (`viewOpen`) — nothing else: no structure, files or comments. The live channel sends it the view's
 * changes only (realtime).
 */
export function viewShareScope(tableId: string, viewId: string, permission: 'r' | 'rw'): TokenScope {
  return { tables: [tableId], operations: permission === 'rw' ? ['read_rows', 'write_rows', 'sql'] : ['read_rows', 'sql'], view: { table: tableId, view: viewId } };
}

/**
 * What a row listing asks for, once a view-limited token's view is imposed: the request may name the
 * view's table and view (by id or name, checked by the caller against the metadata) or nothing; the
 * view's ids replace whatever it named. Null = the scope has no view (the request stands as it is).
 */
export function imposeView<T extends { table_name?: string; table_id?: string; view_name?: string; view_id?: string }>(
  scope: TokenScope | null | undefined,
  query: T,
): T | null {
  if (!scope?.view) return null;
  const { table_name: _tn, view_name: _vn, ...rest } = query;
  return { ...(rest as T), table_id: scope.view.table, view_id: scope.view.view };
}

/** Parses `a.b.c.d/n`, `x::/n` or a single address; null when malformed. */
export function parseNetwork(value: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, bits, extra] = value.trim().split('/');
  if (extra !== undefined || !address) return null;
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** A network list, and its answers for the addresses already checked (checking builds a SocketAddress each time). */
interface NetworkList {
  list: BlockList;
  answers: Map<string, boolean>;
  /** The last address asked and its answer: a token's calls mostly come from one client. */
  lastIp: string | undefined;
  lastAnswer: boolean;
}

const lists = new Map<string, NetworkList>();
/** By the list itself: a verified token's claims are kept in memory, so its list is found without joining it into a key. */
const byArray = new WeakMap<readonly string[], NetworkList>();
/** Addresses remembered per list (a token is used from few; the map starts over when full). */
const MAX_ANSWERS = 1000;

/** Whether `ip` lies in one of `networks` (IPv4-mapped IPv6 clients count as their IPv4 address). */
export function inNetworks(networks: readonly string[], ip: string): boolean {
  let entry = byArray.get(networks);
  if (!entry) {
    entry = networkList(networks);
    byArray.set(networks, entry);
  }
  if (entry.lastIp === ip) return entry.lastAnswer;
  let answer = entry.answers.get(ip);
  if (answer === undefined) {
    answer = check(entry.list, ip);
    if (entry.answers.size >= MAX_ANSWERS) entry.answers.clear();
    entry.answers.set(ip, answer);
  }
  entry.lastIp = ip;
  entry.lastAnswer = answer;
  return answer;
}

/** The parsed list for these networks, shared by every array that spells them alike. */
function networkList(networks: readonly string[]): NetworkList {
  const key = networks.join(',');
  let entry = lists.get(key);
  if (!entry) {
    const list = new BlockList();
    for (const n of networks) {
      const parsed = parseNetwork(n);
      if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
    if (lists.size >= 1000) lists.clear(); // bounded: one entry per distinct network list
    entry = { list, answers: new Map(), lastIp: undefined, lastAnswer: false };
    lists.set(key, entry);
  }
  return entry;
}

function check(list: BlockList, ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
