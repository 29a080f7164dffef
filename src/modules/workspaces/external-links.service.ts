import type { Db, Executor } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { hashPassword, randomHex, sha256Hex, verifyPassword } from '../../shared/crypto.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import { REQUIRED, type BaseAccess, type BaseListing } from '../access/index.js';
import * as repo from './workspaces.repository.js';
import type { ExternalLinkRow } from './workspaces.repository.js';
import type { ShareTarget } from './shares.service.js';

const CUSTOM_TOKEN = /^[A-Za-z0-9_-]{4,100}$/;
const DAY_MS = 86_400_000;
export const MIN_LINK_PASSWORD_LENGTH = 8;
export const MAX_EXPIRE_DAYS = 3650;

export interface NewExternalLink {
  token?: unknown;
  password?: unknown;
  expireDays?: unknown;
}

/** Called after a link is deleted so Base-Tokens issued from it stop working. */
export type LinkDeletedListener = (link: ExternalLinkRow) => Promise<void> | void;
/** Called inside the transaction that deletes a link (revocation commits with it). */
export type LinkDeletingListener = (trx: Executor, link: ExternalLinkRow) => Promise<void>;

export type LinkCheck =
  | { ok: true; link: ExternalLinkRow; base: BaseListing }
  | { ok: false; reason: 'not-found' | 'password-required' | 'password-wrong' };

/** External links: read-only public access to a base, by random token or custom name. */
export class ExternalLinksService {
  private readonly listeners: LinkDeletedListener[] = [];
  private readonly deletingListeners: LinkDeletingListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
  ) {}

  onLinkDeleted(listener: LinkDeletedListener): void {
    this.listeners.push(listener);
  }

  onLinkDeleting(listener: LinkDeletingListener): void {
    this.deletingListeners.push(listener);
  }

  async list(user: AccountUser, target: ShareTarget): Promise<ExternalLinkRow[]> {
    // Managers only: a link's token is a credential, and read-only collaborators need none.
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageExternalLinks);
    return repo.listExternalLinks(this.db, base.id);
  }

  /** A new link; its token is returned this once (only its SHA-256 and last four characters are stored). */
  async create(user: AccountUser, target: ShareTarget, input: NewExternalLink): Promise<{ link: ExternalLinkRow; token: string }> {
    const custom = input.token !== undefined && input.token !== null && input.token !== '';
    if (custom && (typeof input.token !== 'string' || !CUSTOM_TOKEN.test(input.token))) {
      throw badRequest('token invalid: 4 to 100 characters of A-Z, a-z, 0-9, _ and -.');
    }
    const password = optionalString(input.password);
    if (password !== null && (password.length < MIN_LINK_PASSWORD_LENGTH || password.length > 256)) {
      throw badRequest(`password invalid: at least ${MIN_LINK_PASSWORD_LENGTH} characters.`);
    }
    const expireDays = parseExpireDays(input.expireDays);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageExternalLinks);
    const now = this.clock.now();
    const token = custom ? (input.token as string) : randomHex(10);
    try {
      const link = await repo.insertExternalLink(this.db, {
        base_id: base.id,
        token: sha256Hex(token),
        token_hint: token.slice(-4),
        is_custom: custom ? 1 : 0,
        password_hash: password === null ? null : await hashPassword(password),
        expire_at: expireDays === null ? null : now + expireDays * DAY_MS,
        creator_id: user.id,
        created_at: now,
      });
      return { link, token };
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`Token ${token} already exists.`);
      throw error;
    }
  }

  async remove(user: AccountUser, target: ShareTarget, token: string): Promise<void> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageExternalLinks);
    const link = await repo.findExternalLink(this.db, token);
    if (!link || link.base_id !== base.id) throw notFound(`Token ${token} not found`);
    await this.db.transaction().execute(async (trx) => {
      if (!(await repo.deleteExternalLink(trx, base.id, token))) throw notFound(`Token ${token} not found`);
      for (const listener of this.deletingListeners) await listener(trx, link);
    });
    for (const listener of this.listeners) await listener(link);
  }

  /** Look up a link for public use: unknown and expired links are the same "not found". */
  async check(token: string, password: string | null): Promise<LinkCheck> {
    const link = await repo.findExternalLink(this.db, token);
    if (!link || this.isExpired(link)) return { ok: false, reason: 'not-found' };
    if (link.password_hash !== null) {
      if (password === null) return { ok: false, reason: 'password-required' };
      if (!(await verifyPassword(password, link.password_hash))) return { ok: false, reason: 'password-wrong' };
    }
    const base = await this.access.findById(link.base_id);
    if (!base) return { ok: false, reason: 'not-found' };
    return { ok: true, link, base };
  }

  /** Whether `link` still exists: a cheap re-check after a slower step (tokens read a revocation version in between). */
  async exists(link: ExternalLinkRow): Promise<boolean> {
    return (await repo.findExternalLinkById(this.db, link.id))?.token === link.token;
  }

  isExpired(link: ExternalLinkRow): boolean {
    return link.expire_at !== null && link.expire_at <= this.clock.now();
  }
}

function optionalString(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw badRequest('password invalid.');
  return value;
}

function parseExpireDays(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const text = String(value);
  if (!/^\d{1,5}$/.test(text)) throw badRequest('expire_days invalid.');
  const days = Number(text);
  if (days < 1 || days > MAX_EXPIRE_DAYS) throw badRequest(`expire_days invalid: 1 to ${MAX_EXPIRE_DAYS}.`);
  return days;
}
