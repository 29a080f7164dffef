import type { Db } from '../../db/index.js';
import { apiError, badRequest, notFound, permissionDenied } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import { atLeast, REQUIRED, type BaseAccess } from '../access/index.js';
import { relatedUsers, type RelatedUserRow } from './collaborators.repository.js';

/** A user as the original's related-users and app-user-info answer it. */
export interface RelatedUser {
  email: string;
  name: string;
  contact_email: string;
  avatar_url: string;
  id_in_org: string;
}

export function relatedUserRecord(row: RelatedUserRow): RelatedUser {
  return { email: row.virtual_id, name: row.name, contact_email: row.email, avatar_url: '', id_in_org: '' };
}

/** Who can see a base: `related-users` (Base-Token or Account-Token) and `app-user-info` (API-Token). */
export class CollaboratorsService {
  constructor(
    private readonly db: Db,
    private readonly access: BaseAccess,
  ) {}

  /** `app_user_list` (the original's users of its app feature) is always empty here. */
  async forBase(baseId: number): Promise<{ user_list: RelatedUser[]; app_user_list: RelatedUser[] }> {
    return { user_list: (await relatedUsers(this.db, baseId)).map(relatedUserRecord), app_user_list: [] };
  }

  /** Account-Token: any access to the base (404 unknown base, 403 no access). */
  async forAccount(user: AccountUser, baseUuid: string): Promise<{ user_list: RelatedUser[]; app_user_list: RelatedUser[] }> {
    const base = await this.access.findByUuid(baseUuid);
    if (!base) throw notFound('dtable not found.');
    if (!atLeast(await this.access.permissionOf(base, user.id), 'r')) throw permissionDenied();
    return this.forBase(base.id);
  }

  /** Account-Token, the base by workspace and name (the contract's 404 workspace → 404 base → 403 order). */
  async forNamedBase(user: AccountUser, workspaceId: string, baseName: string): Promise<{ user_list: RelatedUser[]; app_user_list: RelatedUser[] }> {
    const { base } = await this.access.resolve(user, workspaceId, baseName, REQUIRED.read);
    return this.forBase(base.id);
  }

  /** One user with access to the API-Token's base, by virtual id or e-mail; 404 when not such a user. */
  async userOfBase(baseId: number, username: unknown): Promise<RelatedUser> {
    if (typeof username !== 'string' || username.trim() === '') throw badRequest('username invalid.');
    const wanted = username.trim().toLowerCase();
    const row = (await relatedUsers(this.db, baseId)).find((u) => u.virtual_id.toLowerCase() === wanted || u.email.toLowerCase() === wanted);
    if (!row) throw apiError(404, `User ${username} not found.`);
    return relatedUserRecord(row);
  }
}
