import type { Db, Executor } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';
import { REQUIRED, isSharePermission, type BaseAccess, type SharePermission } from '../access/index.js';
import * as repo from './workspaces.repository.js';

export interface ShareTarget {
  workspaceId: string;
  baseName: string;
}

/** Called after a share is changed or removed, so credentials derived from it can be revoked. */
export type ShareChangeListener = (baseId: number, userId: number) => Promise<void> | void;
/** Called inside the transaction that changes or removes a share (revocation commits with it). */
export type ShareChangingListener = (trx: Executor, baseId: number, userId: number) => Promise<void>;

export class SharesService {
  private readonly listeners: ShareChangeListener[] = [];
  private readonly changingListeners: ShareChangingListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly accounts: AccountsService,
  ) {}

  onShareChanged(listener: ShareChangeListener): void {
    this.listeners.push(listener);
  }

  onShareChanging(listener: ShareChangingListener): void {
    this.changingListeners.push(listener);
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
    await this.change(base.id, recipient?.id, login, (trx, userId) => repo.updateShare(trx, base.id, userId, perm));
  }

  async remove(user: AccountUser, target: ShareTarget, email: unknown): Promise<void> {
    const login = checkEmail(email);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageShares);
    const recipient = await this.accounts.findUser(login);
    await this.change(base.id, recipient?.id, login, (trx, userId) => repo.deleteShare(trx, base.id, userId));
  }

  /** Change a share and revoke what was issued under it in one transaction, then tell the listeners. */
  private async change(baseId: number, userId: number | undefined, login: string, write: (trx: Executor, userId: number) => Promise<boolean>) {
    if (userId === undefined) throw notFound(`Share to ${login} not found.`);
    await this.db.transaction().execute(async (trx) => {
      if (!(await write(trx, userId))) throw notFound(`Share to ${login} not found.`);
      for (const listener of this.changingListeners) await listener(trx, baseId, userId);
    });
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
