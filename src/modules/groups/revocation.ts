import type { Executor } from '../../db/index.js';

/** A user who may have lost (some) access to a base: their Base-Tokens on it must be revoked. */
export interface AccessLoss {
  baseId: number;
  userId: number;
}

/** Called inside the transaction that takes access away (revocation commits with it). */
export type AccessLosingListener = (trx: Executor, losses: readonly AccessLoss[]) => Promise<void>;
/** Called after that transaction committed (to announce the revocation to other instances). */
export type AccessLostListener = (losses: readonly AccessLoss[]) => Promise<void>;
/** Called after bases vanished with a deleted group, so caches holding them can drop them. */
export type BasesGoneListener = (uuids: readonly string[]) => Promise<void>;

/** The listeners of the group module's access-removing operations, shared by its services. */
export class AccessRevocation {
  private readonly losing: AccessLosingListener[] = [];
  private readonly lost: AccessLostListener[] = [];
  private readonly gone: BasesGoneListener[] = [];

  onAccessLosing(listener: AccessLosingListener): void {
    this.losing.push(listener);
  }

  onAccessLost(listener: AccessLostListener): void {
    this.lost.push(listener);
  }

  onBasesGone(listener: BasesGoneListener): void {
    this.gone.push(listener);
  }

  async revokeIn(trx: Executor, losses: readonly AccessLoss[]): Promise<void> {
    if (losses.length === 0) return;
    for (const listener of this.losing) await listener(trx, losses);
  }

  async announce(losses: readonly AccessLoss[]): Promise<void> {
    if (losses.length === 0) return;
    for (const listener of this.lost) await listener(losses);
  }

  async basesGone(uuids: readonly string[]): Promise<void> {
    if (uuids.length === 0) return;
    for (const listener of this.gone) await listener(uuids);
  }
}

/** Every pair of the bases and users. */
export function lossesOf(baseIds: readonly number[], userIds: readonly number[]): AccessLoss[] {
  return baseIds.flatMap((baseId) => userIds.map((userId) => ({ baseId, userId })));
}
