import type { Db } from '../../db/index.js';
import { badRequest, notFound, permissionDenied } from '../../shared/errors.js';
import { parsePage } from '../../shared/pagination.js';
import type { AccountUser } from '../accounts/index.js';
import { userByVirtualId } from './base-context.repository.js';
import * as repo from './inbox.repository.js';
import { accountNotice, baseNotice } from './present.js';
import { parsePositiveId } from '../../shared/ids.js';

/** Inbox lists: `per_page` is capped at this many notifications. */
export const INBOX_MAX_PER_PAGE = 100;

/** A user's in-app notifications: account-wide (`/api/v2.1/…`) and per base (`/api-gateway/…`). */
export class InboxService {
  constructor(private readonly db: Db) {}

  async list(user: AccountUser, query: { page?: unknown; per_page?: unknown }) {
    const page = parsePage(query, { page: 1, perPage: 25 }, INBOX_MAX_PER_PAGE);
    const [rows, count, unseen] = await Promise.all([
      repo.listNotifications(this.db, user.id, null, page.offset, page.perPage),
      repo.countNotifications(this.db, user.id, false),
      repo.countNotifications(this.db, user.id, true),
    ]);
    return { notification_list: rows.map(accountNotice), count, unseen_count: unseen };
  }

  async markAllSeen(user: AccountUser): Promise<void> {
    await repo.setSeen(this.db, user.id, {}, true);
  }

  async markOneSeen(user: AccountUser, noticeId: unknown): Promise<void> {
    const id = parsePositiveId(noticeId);
    if (id === null) throw badRequest('notice_id invalid.');
    const row = await repo.findNotification(this.db, id);
    if (!row) throw notFound(`Notification ${id} not found.`);
    if (Number(row.user_id) !== user.id) throw permissionDenied();
    await repo.setSeen(this.db, user.id, { id }, true);
  }

  async deleteAll(user: AccountUser): Promise<void> {
    await repo.deleteNotifications(this.db, user.id, null);
  }

  /** The Base-Token's user (`claims.username`); tokens without a user (API-Tokens, links) have none. */
  private async gatewayUser(username: string) {
    if (!username) return undefined;
    return userByVirtualId(this.db, username);
  }

  async listForBase(username: string, baseId: number, query: { page?: unknown; per_page?: unknown }) {
    const user = await this.gatewayUser(username);
    if (!user) return { notification_list: [] };
    const page = parsePage(query, { page: 1, perPage: 25 }, INBOX_MAX_PER_PAGE);
    const rows = await repo.listNotifications(this.db, user.id, baseId, page.offset, page.perPage);
    return { notification_list: rows.map((r) => baseNotice(r, user.virtual_id)) };
  }

  async setSeenForBase(username: string, baseId: number, seen: unknown): Promise<void> {
    const value = parseSeen(seen);
    const user = await this.gatewayUser(username);
    if (user) await repo.setSeen(this.db, user.id, { baseId }, value);
  }

  async setOneSeenForBase(username: string, baseId: number, id: string, seen: unknown): Promise<void> {
    const value = parseSeen(seen);
    const user = await this.gatewayUser(username);
    const noticeId = parsePositiveId(id);
    const row = noticeId === null ? undefined : await repo.findNotification(this.db, noticeId);
    if (!user || !row || Number(row.user_id) !== user.id || Number(row.base_id) !== baseId) {
      throw notFound(`Notification ${id} not found.`);
    }
    await repo.setSeen(this.db, user.id, { id: Number(id) }, value);
  }

  async deleteForBase(username: string, baseId: number): Promise<void> {
    const user = await this.gatewayUser(username);
    if (user) await repo.deleteNotifications(this.db, user.id, baseId);
  }
}

/** `seen` as the original takes it: the strings `true`/`false` (JSON booleans accepted too). */
function parseSeen(value: unknown): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw badRequest('seen invalid.');
}
