import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { apiError, badRequest, notFound } from '../../shared/errors.js';
import { scopeTableIds, tableRefusal } from '../access/index.js';
import { relatedUsers } from '../collaborators/index.js';
import { loadMetadata, storedIdsOf } from '../rows/index.js';
import type { NotifyUserInput } from '../notifications/index.js';
import { apiTokenCreator, commentsPerRow, commentsSince, countRowComments, deleteComment, findComment, insertComment, listComments, tableOfRow, updateComment, type CommentRow } from './comments.repository.js';

export const MSG_TYPE_COMMENT = 'comment';
export const COMMENT_MAX_LENGTH = 10_000;
export const LIST_DEFAULT_LIMIT = 25;
export const LIST_MAX_LIMIT = 100;
/** `comments-within-days/`: at most a year back, at most this many comments. */
export const WITHIN_DAYS_MAX = 365;
export const WITHIN_DAYS_LIMIT = 1000;

/** The base the comment belongs to and who writes (always a user: comments have an author). */
export interface CommentBase {
  id: number;
  uuid: string;
}
/**
 * A table-scoped token's tables (names or ids, as its scope lists them): its comments are only those of
 * rows of these tables. Undefined for every other caller.
 */
export type CommentScope = readonly string[] | undefined;

export interface CommentAuthor {
  userId: number;
  virtualId: string;
}

export type Notify = (trx: Executor, input: Omit<NotifyUserInput, 'now' | 'emailDelayMs'>) => Promise<boolean>;

/** The original's comment record (times as ISO 8601 with milliseconds). */
export function commentRecord(row: CommentRow, baseUuid: string) {
  return {
    id: Number(row.id),
    author: row.author,
    comment: row.comment,
    dtable_uuid: baseUuid,
    table_id: row.table_id,
    row_id: row.row_id,
    created_at: new Date(Number(row.created_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
    resolved: Number(row.resolved),
  };
}

function commentText(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw badRequest('comment invalid.');
  if (value.length > COMMENT_MAX_LENGTH) throw badRequest(`comment is longer than ${COMMENT_MAX_LENGTH} characters.`);
  return value;
}

function idText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 32) throw badRequest(`${name} invalid.`);
  return value;
}

/** A whole number in [min, max], `fallback` when absent; anything else is a 400. */
function intParam(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw badRequest(`${name} invalid.`);
  return n;
}

/** `@<email>` or `@<virtual id>`: the addresses mentioned in a comment. */
export function mentionedAddresses(comment: string): Set<string> {
  const found = new Set<string>();
  for (const match of comment.matchAll(/@([^\s@<>()[\],;:"']+@[^\s@<>()[\],;:"']+\.[A-Za-z0-9-]+)/g)) found.add(match[1]!.toLowerCase());
  return found;
}

/** Row comments: list, add (with @ mentions notified), edit and delete one's own. */
export class CommentsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly notify: Notify,
  ) {}

  async list(base: CommentBase, query: { row_id?: unknown; table_id?: unknown; start?: unknown; limit?: unknown }, scope?: CommentScope) {
    const rowId = query.row_id === undefined ? null : idText(query.row_id, 'row_id');
    const tableId = query.table_id === undefined ? null : idText(query.table_id, 'table_id');
    if (rowId === null && tableId === null) throw badRequest('row_id invalid.');
    const start = intParam(query.start, 'start', 0, 0, 1_000_000_000);
    const limit = intParam(query.limit, 'limit', LIST_DEFAULT_LIMIT, 1, LIST_MAX_LIMIT);
    const tableIds = await this.scopeIds(base, scope);
    if (rowId !== null) await this.assertRowInScope(base, rowId, tableIds);
    const rows = await listComments(this.db, base.id, tableId, rowId, start, limit, tableIds);
    return rows.map((r) => commentRecord(r, base.uuid));
  }

  /** The user an API-Token's comments are written as: its creator, while still active. */
  async apiTokenAuthor(tokenId: number): Promise<CommentAuthor | undefined> {
    const user = await apiTokenCreator(this.db, tokenId);
    return user && { userId: Number(user.id), virtualId: user.virtual_id };
  }

  async countPerRow(base: CommentBase, scope?: CommentScope): Promise<{ rows_comments_num: Record<string, number> }> {
    return { rows_comments_num: await commentsPerRow(this.db, base.id, await this.scopeIds(base, scope)) };
  }

  async count(base: CommentBase, query: { row_id?: unknown }, scope?: CommentScope): Promise<{ count: number }> {
    const rowId = idText(query.row_id, 'row_id');
    await this.assertRowInScope(base, rowId, await this.scopeIds(base, scope));
    return { count: await countRowComments(this.db, base.id, rowId) };
  }

  async withinDays(base: CommentBase, query: { days?: unknown }, scope?: CommentScope) {
    const days = intParam(query.days, 'days', 3, 1, WITHIN_DAYS_MAX);
    const rows = await commentsSince(this.db, base.id, this.clock.now() - days * 86_400_000, WITHIN_DAYS_LIMIT, await this.scopeIds(base, scope));
    return { comments: rows.map((r) => commentRecord(r, base.uuid)) };
  }

  async get(base: CommentBase, id: number, scope?: CommentScope) {
    return commentRecord(await this.existing(base, id, scope), base.uuid);
  }

  async add(base: CommentBase, author: CommentAuthor, body: Record<string, unknown>, scope?: CommentScope): Promise<{ success: true }> {
    const comment = commentText(body.comment);
    const rowId = idText(body.row_id, 'row_id');
    const tableId = idText(body.table_id, 'table_id');
    const tableIds = await this.scopeIds(base, scope);
    if (tableIds && !tableIds.includes(tableId)) throw apiError(403, tableRefusal(tableId));
    await this.db.transaction().execute(async (trx) => {
      const rowTable = await tableOfRow(trx, base.id, rowId);
      // A trashed table's rows stay stored under its id (rows/kept-tables.ts) but are no row of the base.
      if (rowTable === undefined || rowTable !== tableId || !storedIdsOf(await loadMetadata(trx, base.id)).tableIds.includes(tableId)) throw notFound('row not found.');
      const now = this.clock.now();
      await insertComment(trx, { base_id: base.id, table_id: tableId, row_id: rowId, author_id: author.userId, author: author.virtualId, comment, created_at: now, updated_at: now });
      await this.notifyMentions(trx, base, author, { comment, row_id: rowId, table_id: tableId });
    });
    return { success: true };
  }

  async edit(base: CommentBase, author: CommentAuthor, id: number, body: Record<string, unknown>, scope?: CommentScope): Promise<{ success: true }> {
    const comment = commentText(body.comment);
    const row = await this.own(base, author, id, scope);
    await updateComment(this.db, Number(row.id), comment, this.clock.now());
    return { success: true };
  }

  async remove(base: CommentBase, author: CommentAuthor, id: number, scope?: CommentScope): Promise<{ success: true }> {
    const row = await this.own(base, author, id, scope);
    await deleteComment(this.db, Number(row.id));
    return { success: true };
  }

  /** A comment of the base; a table-scoped token is refused one of a row outside its tables (403 naming the table). */
  private async existing(base: CommentBase, id: number, scope?: CommentScope): Promise<CommentRow> {
    const row = await findComment(this.db, base.id, id);
    if (!row) throw notFound('comment not found.');
    const tableIds = await this.scopeIds(base, scope);
    if (tableIds && !tableIds.includes(row.table_id)) throw apiError(403, tableRefusal(row.table_id));
    return row;
  }

  /** The ids of the tables a table scope reaches (the access policy resolves names and ids); undefined when unscoped. */
  private async scopeIds(base: CommentBase, scope: CommentScope): Promise<string[] | undefined> {
    if (!scope) return undefined;
    return scopeTableIds({ tables: [...scope] }, (await loadMetadata(this.db, base.id)).tables);
  }

  /** A row of a table outside the scope is refused, naming its table (an unknown row is no refusal: it has no comments). */
  private async assertRowInScope(base: CommentBase, rowId: string, tableIds: readonly string[] | undefined): Promise<void> {
    if (!tableIds) return;
    const table = await tableOfRow(this.db, base.id, rowId);
    if (table !== undefined && !tableIds.includes(table)) throw apiError(403, tableRefusal(table));
  }

  private async own(base: CommentBase, author: CommentAuthor, id: number, scope?: CommentScope): Promise<CommentRow> {
    const row = await this.existing(base, id, scope);
    if (Number(row.author_id) !== author.userId) throw apiError(403, 'You can only change your own comment.');
    return row;
  }

  /** A `comment` notification for each member of the base the comment mentions (not the author). */
  private async notifyMentions(trx: Executor, base: CommentBase, author: CommentAuthor, detail: { comment: string; row_id: string; table_id: string }) {
    const mentioned = mentionedAddresses(detail.comment);
    if (mentioned.size === 0) return;
    const members = await relatedUsers(trx, base.id);
    const notified = new Set<string>([author.virtualId]);
    for (const member of members) {
      if (notified.has(member.virtual_id)) continue;
      if (!mentioned.has(member.email.toLowerCase()) && !mentioned.has(member.virtual_id.toLowerCase())) continue;
      notified.add(member.virtual_id);
      await this.notify(trx, { virtualId: member.virtual_id, msgType: MSG_TYPE_COMMENT, detail: { author: author.virtualId, ...detail }, baseId: base.id, dtableUuid: base.uuid });
    }
  }
}

