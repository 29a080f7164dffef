import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest } from '../../shared/errors.js';
import { randomHex, sha256Hex } from '../../shared/crypto.js';
import { openSecret, sealSecret } from './two-factor-secret.js';

const ISSUER = 'basegate';
const PERIOD_S = 30;
const RECOVERY_CODES = 10;
/** The login header the original reads (`X-SEAFILE-OTP`): a 6-digit code, or here also a recovery code. */
const TOTP_CODE = /^\d{6}$/;
const RECOVERY_CODE = /^[a-z0-9]{5}-[a-z0-9]{5}$/;
const CODE_MISSING = 'Two factor auth token is missing.';
const CODE_INVALID = 'Two factor auth token is invalid.';
/** Trusted devices kept per user; a new one beyond this replaces the oldest. */
const MAX_TRUSTED_DEVICES = 20;
const DAY_MS = 86_400_000;
const TRUST_KEY = /^[0-9a-f]{64}$/;

/** What a sign-in carries for the second factor (the original's headers). */
export interface SecondFactor {
  /** `X-SEAFILE-OTP`: a TOTP code or a recovery code. */
  otp?: string | undefined;
  /** `X-SEAFILE-2FA-TRUST-DEVICE: 1`: trust this device once the code is accepted. */
  trustDevice?: boolean | undefined;
  /** `X-SEAFILE-S2FA`: the key of a trusted device, which skips the code until it expires. */
  trustedKey?: string | undefined;
}

export interface TwoFactorStatus {
  enabled: boolean;
  pending: boolean;
  force_2fa: boolean;
  recovery_codes_left: number;
}

/** The login's 400 with the header the original's clients look for (`X-Seafile-OTP: required`). */
function signInError(message: string): AppError {
  return new AppError(400, { non_field_errors: [message] }, { 'x-seafile-otp': 'required' });
}

function totpOf(secret: string, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret: Secret.fromBase32(secret) });
}

function newRecoveryCode(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/**
 * TOTP two-factor sign-in (RFC 6238, SHA-1, 6 digits, 30 s, one step of clock drift either way).
 * A code is accepted once: the step it belongs to is stored and a code of that step or an earlier one
 * is refused, by one conditional UPDATE (so two instances cannot both accept it). Recovery codes are
 * stored as SHA-256 and used once. Guessing is throttled by the password back-off (plugins/password-throttle.ts).
 */
export class TwoFactorService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secretKey: string,
    /** How long a trusted device skips the code (`TWO_FACTOR_DEVICE_REMEMBER_DAYS`; 0: never trusted). */
    private readonly trustDays: number = 90,
  ) {}

  async status(userId: number): Promise<TwoFactorStatus> {
    const row = await this.row(userId);
    const left = await this.db
      .selectFrom('two_factor_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return {
      enabled: row?.enabled === 1,
      pending: row?.enabled === 0 && row.secret_enc !== null,
      force_2fa: row?.force_2fa === 1,
      recovery_codes_left: row?.enabled === 1 ? Number(left.n) : 0,
    };
  }

  async isEnabled(userId: number): Promise<boolean> {
    return (await this.row(userId))?.enabled === 1;
  }

  /** Starts enrolment: a new secret (replacing an unconfirmed one), returned once with its otpauth:// URI. */
  async begin(userId: number, email: string): Promise<{ secret: string; otpauth_uri: string }> {
    const row = await this.row(userId);
    if (row?.enabled === 1) throw badRequest('Two-factor authentication is already enabled.');
    const secret = new Secret({ size: 20 }).base32;
    const sealed = sealSecret(this.secretKey, secret);
    const now = this.clock.now();
    await this.db
      .insertInto('user_two_factor')
      .values({ user_id: userId, secret_enc: sealed, enabled: 0, last_step: 0, force_2fa: 0, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_enc: sealed, enabled: 0, last_step: 0, updated_at: now }))
      .execute();
    return { secret, otpauth_uri: totpOf(secret, email).toString() };
  }

  /** Confirms enrolment with a code of the new secret; returns the recovery codes (shown once). */
  async confirm(userId: number, code: unknown): Promise<string[]> {
    const row = await this.row(userId);
    if (!row || row.secret_enc === null) throw badRequest('Two-factor authentication has not been started: POST first.');
    if (row.enabled === 1) throw badRequest('Two-factor authentication is already enabled.');
    if (!(await this.acceptTotp(userId, row.secret_enc, code))) throw badRequest(CODE_INVALID);
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('user_two_factor').set({ enabled: 1, updated_at: this.clock.now() }).where('user_id', '=', userId).execute();
      return this.replaceRecoveryCodes(trx, userId);
    });
  }

  /** The user turns 2FA off, proving it with a code (or a recovery code). */
  async disableWithCode(userId: number, code: unknown): Promise<void> {
    if (!(await this.isEnabled(userId))) throw badRequest('Two-factor authentication is not enabled.');
    if (!(await this.acceptCode(userId, code))) throw badRequest(CODE_INVALID);
    await this.disable(userId);
  }

  /** New recovery codes (the old ones stop working), proven with a current code. */
  async regenerateRecoveryCodes(userId: number, code: unknown): Promise<string[]> {
    if (!(await this.isEnabled(userId))) throw badRequest('Two-factor authentication is not enabled.');
    if (!(await this.acceptCode(userId, code))) throw badRequest(CODE_INVALID);
    return this.db.transaction().execute((trx) => this.replaceRecoveryCodes(trx, userId));
  }

  /** Turns 2FA off (the admin's `DELETE /api2/two-factor-auth/{user_id}/`); the force flag stays, trusted devices go. */
  async disable(userId: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('user_two_factor').set({ secret_enc: null, enabled: 0, last_step: 0, updated_at: this.clock.now() }).where('user_id', '=', userId).execute();
      await trx.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
      await this.forgetTrustedDevices(trx, userId);
    });
  }

  /** Every trusted device of the user stops skipping the code (2FA off, a password change or reset). */
  async forgetTrustedDevices(trx: Executor, userId: number): Promise<void> {
    await trx.deleteFrom('two_factor_trusted_devices').where('user_id', '=', userId).execute();
  }

  async setForced(userId: number, forced: boolean): Promise<void> {
    const now = this.clock.now();
    await this.db
      .insertInto('user_two_factor')
      .values({ user_id: userId, secret_enc: null, enabled: 0, last_step: 0, force_2fa: forced ? 1 : 0, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ force_2fa: forced ? 1 : 0, updated_at: now }))
      .execute();
  }

  /**
   * The second factor of a sign-in, after the password matched: nothing when 2FA is off; else a
   * trusted device's key (`X-SEAFILE-S2FA`) of this user that has not expired skips the code, or the
   * code must be given and valid (400 with `X-Seafile-OTP: required` otherwise). Returns the key to
   * answer in `X-SEAFILE-S2FA`: the trusted key that was used, or a new one when the code was accepted
   * with `X-SEAFILE-2FA-TRUST-DEVICE: 1` (as the original does); none when 2FA is off.
   */
  async checkSignIn(userId: number, factor: SecondFactor = {}): Promise<{ trustedKey?: string }> {
    if (!(await this.isEnabled(userId))) return {};
    if (factor.trustedKey !== undefined && (await this.isTrusted(userId, factor.trustedKey))) return { trustedKey: factor.trustedKey };
    const code = factor.otp;
    if (code === undefined || code.trim() === '') throw signInError(CODE_MISSING);
    if (!(await this.acceptCode(userId, code.trim()))) throw signInError(CODE_INVALID);
    return factor.trustDevice && this.trustDays > 0 ? { trustedKey: await this.trustDevice(userId) } : {};
  }

  private async isTrusted(userId: number, key: string): Promise<boolean> {
    if (this.trustDays <= 0 || !TRUST_KEY.test(key)) return false;
    const row = await this.db
      .selectFrom('two_factor_trusted_devices')
      .select('id')
      .where('key_hash', '=', sha256Hex(key))
      .where('user_id', '=', userId)
      .where('expires_at', '>', this.clock.now())
      .executeTakeFirst();
    return row !== undefined;
  }

  /** A new trusted-device key (only its SHA-256 is stored); expired keys and those beyond the cap go. */
  private async trustDevice(userId: number): Promise<string> {
    const key = randomHex(32);
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('two_factor_trusted_devices').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
      const kept = await trx.selectFrom('two_factor_trusted_devices').select('id').where('user_id', '=', userId).orderBy('id', 'desc').offset(MAX_TRUSTED_DEVICES - 1).limit(1).executeTakeFirst();
      if (kept) await trx.deleteFrom('two_factor_trusted_devices').where('user_id', '=', userId).where('id', '<=', kept.id).execute();
      await trx.insertInto('two_factor_trusted_devices').values({ user_id: userId, key_hash: sha256Hex(key), created_at: now, expires_at: now + this.trustDays * DAY_MS }).execute();
    });
    return key;
  }

  private row(userId: number) {
    return this.db.selectFrom('user_two_factor').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  private async acceptCode(userId: number, code: unknown): Promise<boolean> {
    if (typeof code !== 'string') return false;
    const value = code.trim().toLowerCase();
    if (RECOVERY_CODE.test(value)) return this.useRecoveryCode(userId, value);
    const row = await this.row(userId);
    return !!row?.secret_enc && this.acceptTotp(userId, row.secret_enc, value);
  }

  /** Valid for the secret and of a later step than the last accepted one; the step is claimed atomically. */
  private async acceptTotp(userId: number, sealed: string, code: unknown): Promise<boolean> {
    if (typeof code !== 'string' || !TOTP_CODE.test(code.trim())) return false;
    const now = this.clock.now();
    const delta = totpOf(openSecret(this.secretKey, sealed), '').validate({ token: code.trim(), timestamp: now, window: 1 });
    if (delta === null) return false;
    const step = Math.floor(now / 1000 / PERIOD_S) + delta;
    const claimed = await this.db
      .updateTable('user_two_factor')
      .set({ last_step: step })
      .where('user_id', '=', userId)
      .where('last_step', '<', step)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) === 1;
  }

  private async useRecoveryCode(userId: number, code: string): Promise<boolean> {
    const used = await this.db
      .updateTable('two_factor_recovery_codes')
      .set({ used_at: this.clock.now() })
      .where('user_id', '=', userId)
      .where('code_hash', '=', sha256Hex(code))
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(used.numUpdatedRows) === 1;
  }

  private async replaceRecoveryCodes(trx: Executor, userId: number): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    await trx.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute();
    await trx.insertInto('two_factor_recovery_codes').values(codes.map((code) => ({ user_id: userId, code_hash: sha256Hex(code), used_at: null }))).execute();
    return codes;
  }
}

/** For tests and the console: the current code of a secret at a time. */
export function totpCode(secret: string, timestamp: number): string {
  return totpOf(secret, '').generate({ timestamp });
}
