import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';
import type { BaseAccess } from './base-access.js';
import { REQUIRED, isSharePermission, type SharePermission } from './base-policy.js';
import * as repo from './workspaces.repository.js';

export interface ShareTarget {
  workspaceId: string;
  baseName: string;
}

/** Called after a share is changed or removed, so credentials derived from it can be revoked. */
export type ShareChangeListener = (baseId: number, userId: number) => Promise<void> | void;

export class SharesService {
  private readonly listeners: ShareChangeListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly accounts: AccountsService,
  ) {}

  onShareChanged(listener: ShareChangeListener): void {
    this.listeners.push(listener);
  }

  async list(user: AccountUser, target: ShareTarget) {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    return repo.listShares(this.db, base.id);
  }

  async add(user: AccountUser, target: ShareTarget, email: unknown, permission: unknown): Promise<void> {
    const perm = checkPermission(permission);
    const login = checkEmail(email);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    const recipient = await this.accounts.findUser(login);
    if (!recipient) throw notFound(`User ${login} not found.`);
    if (recipient.id === base.owner_id) throw badRequest('The base cannot be shared to its owner.');
    try {
      await repo.insertShare(this.db, base.id, recipient.id, perm, this.clock.now());
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`Base ${base.name} is already shared to ${login}.`);
      throw error;
    }
  }

  async update(user: AccountUser, target: ShareTarget, email: unknown, permission: unknown): Promise<void> {
    const perm = checkPermission(permission);
    const login = checkEmail(email);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    const recipient = await this.accounts.findUser(login);
    if (!recipient || !(await repo.updateShare(this.db, base.id, recipient.id, perm))) {
      throw notFound(`Share to ${login} not found.`);
    }
    await this.notify(base.id, recipient.id);
  }

  async remove(user: AccountUser, target: ShareTarget, email: unknown): Promise<void> {
    const login = checkEmail(email);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    const recipient = await this.accounts.findUser(login);
    if (!recipient || !(await repo.deleteShare(this.db, base.id, recipient.id))) {
      throw notFound(`Share to ${login} not found.`);
    }
    await this.notify(base.id, recipient.id);
  }

  private async notify(baseId: number, userId: number): Promise<void> {
    for (const listener of this.listeners) await listener(baseId, userId);
  }
}

function checkPermission(value: unknown): SharePermission {
  if (!isSharePermission(value)) throw badRequest('permission invalid.');
  return value;
}

function checkEmail(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 255) throw badRequest('email invalid.');
  return value.trim();
}
