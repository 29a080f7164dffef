import { createHmac } from 'node:crypto';
import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { randomHex, sha256Hex } from '../../shared/crypto.js';

export interface DeviceInfo {
  platform: string;
  deviceId: string;
  deviceName: string;
  clientVersion?: string;
}

/** A device's last access is written at most this often (not on every request). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Account-Tokens per device: a sign-in naming a device (`platform`, `device_id`, `device_name`, as the
 * original's clients send) gets a token of its own, derived like the default one from a per-device salt
 * (only its SHA-256 is stored), so it can be listed and revoked alone (`GET`/`DELETE /api2/devices/`).
 */
export class DeviceTokens {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secretKey: string,
  ) {}

  async tokenFor(userId: number, device: DeviceInfo, ip: string): Promise<string> {
    const now = this.clock.now();
    const fresh = randomHex(16);
    await this.db
      .insertInto('account_devices')
      .values({
        user_id: userId,
        platform: device.platform.slice(0, 64),
        device_id: device.deviceId.slice(0, 255),
        device_name: device.deviceName.slice(0, 255),
        client_version: (device.clientVersion ?? '').slice(0, 64),
        token_salt: fresh,
        token_hash: sha256Hex(this.derive(userId, fresh)),
        created_at: now,
        last_accessed: now,
        last_login_ip: ip.slice(0, 64),
      })
      .onConflict((oc) =>
        oc.columns(['user_id', 'platform', 'device_id']).doUpdateSet({ device_name: device.deviceName.slice(0, 255), last_accessed: now, last_login_ip: ip.slice(0, 64) }),
      )
      .execute();
    const row = await this.db
      .selectFrom('account_devices')
      .select('token_salt')
      .where('user_id', '=', userId)
      .where('platform', '=', device.platform.slice(0, 64))
      .where('device_id', '=', device.deviceId.slice(0, 255))
      .executeTakeFirstOrThrow();
    return this.derive(userId, row.token_salt);
  }

  private derive(userId: number, salt: string): string {
    return createHmac('sha256', this.secretKey).update(`device-token:${userId}:${salt}`).digest('hex').slice(0, 40);
  }

  /** The user id of a device token (by its hash), touching its last access at most once a minute. */
  async userOf(tokenHash: string): Promise<number | null> {
    const row = await this.db.selectFrom('account_devices').select(['id', 'user_id', 'last_accessed']).where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!row) return null;
    const now = this.clock.now();
    if (now - row.last_accessed >= TOUCH_INTERVAL_MS) {
      await this.db.updateTable('account_devices').set({ last_accessed: now }).where('id', '=', row.id).execute();
    }
    return row.user_id;
  }

  list(userId: number) {
    return this.db.selectFrom('account_devices').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  }

  async revoke(userId: number, platform: string, deviceId: string): Promise<boolean> {
    const gone = await this.db.deleteFrom('account_devices').where('user_id', '=', userId).where('platform', '=', platform).where('device_id', '=', deviceId).executeTakeFirst();
    return Number(gone.numDeletedRows) > 0;
  }

  async revokeByHash(tokenHash: string): Promise<boolean> {
    const gone = await this.db.deleteFrom('account_devices').where('token_hash', '=', tokenHash).executeTakeFirst();
    return Number(gone.numDeletedRows) > 0;
  }

  /** Every device of the user (a password change, reset or deactivation signs them all out). */
  async revokeAll(trx: Executor, userId: number): Promise<void> {
    await trx.deleteFrom('account_devices').where('user_id', '=', userId).execute();
  }
}
