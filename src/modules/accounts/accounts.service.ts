import { createHmac } from 'node:crypto';
import type { Db, Executor } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import { AppError, apiError, badRequest, notFound } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import { hashPassword, randomHex, sha256Hex, verifyPassword } from '../../shared/crypto.js';
import { newUserVirtualId } from '../../shared/ids.js';
import * as repo from './accounts.repository.js';
import type { SignedInUserRow, UserRow } from './accounts.repository.js';
import { DeviceTokens, type DeviceInfo } from './devices.js';
import { TwoFactorService, type SecondFactor } from './two-factor.js';

/** The authenticated caller of an account operation. */
export interface AccountUser {
  id: number;
  virtualId: string;
  email: string;
  name: string;
  isStaff: boolean;
  emailNotification: boolean;
  /**
   * An admin forced two-factor sign-in (`force_2fa`) and the user has not enrolled: the Account-Token
   * then works only on the routes marked `config.beforeTwoFactor` (enrolment, the profile, logout).
   */
  twoFactorSetupRequired: boolean;
}

export function toAccountUser(row: UserRow | SignedInUserRow): AccountUser {
  return {
    id: row.id,
    virtualId: row.virtual_id,
    email: row.email,
    name: row.name,
    isStaff: row.is_staff === 1,
    emailNotification: row.email_notification === 1,
    twoFactorSetupRequired: 'force_2fa' in row && row.force_2fa === 1 && row.two_factor_enabled !== 1,
  };
}

export interface NewUser {
  email: string;
  password: string;
  name?: string | undefined;
  isStaff?: boolean | undefined;
}

const EMAIL = /^[^\s@]{1,128}@[^\s@]{1,126}$/;
const LOGIN_FAILED = 'Unable to login with provided credentials.';

/** A password hash to verify against when the user does not exist, so timing does not reveal it. */
let dummyHash: Promise<string> | null = null;

/**
 * Called before a user is deleted, so credentials derived from the user can be revoked. It may return
 * a follow-up, run once the deletion has committed (e.g. to forget cached bases that vanished with the
 * user: a request served between the listener and the commit could have cached them again).
 */
export type UserDeletingListener = (userId: number) => Promise<void | (() => void | Promise<void>)> | void;

/**
 * A rule that may refuse a user's deletion (it throws the AppError to answer). Asked twice: before
 * anything changes (through the pool), and again inside the deletion's transaction (`db` is that
 * transaction), where it takes the locks that keep its answer true until the commit.
 */
export type UserDeletionGuard = (userId: number, login: string, db: Executor) => Promise<void>;

/**
 * Called inside the transaction that deactivates a user or changes their password, so every credential
 * derived from the user's sign-in (Base-Tokens from the Account-Token or temporary API-Tokens) is revoked
 * with it; the returned follow-up runs once that transaction has committed (to announce the revocation).
 */
export type SignInRevokingListener = (trx: Executor, userId: number) => Promise<() => Promise<void>>;

/** What a sign-in may carry besides the password: the second factor (code, trusted device) and the device. */
export interface LoginExtras extends SecondFactor {
  device?: DeviceInfo | undefined;
  ip?: string | undefined;
}

export class AccountsService {
  private readonly deletingListeners: UserDeletingListener[] = [];
  private readonly deletionGuards: UserDeletionGuard[] = [];
  private readonly signInRevokingListeners: SignInRevokingListener[] = [];
  /** TOTP two-factor sign-in (`two-factor.ts`). */
  readonly twoFactor: TwoFactorService;
  /** Account-Tokens per device (`devices.ts`). */
  readonly devices: DeviceTokens;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secretKey: string,
    options: { twoFactorDeviceRememberDays?: number } = {},
  ) {
    this.twoFactor = new TwoFactorService(db, clock, secretKey, options.twoFactorDeviceRememberDays);
    this.devices = new DeviceTokens(db, clock, secretKey);
  }

  /**
   * Exchange credentials for the user's one Account-Token (or, naming a device, that device's own).
   * The token is derived from a per-user salt with HMAC(SECRET_KEY), so we can hand out the same token
   * on every login while storing only its SHA-256 hash. With 2FA on, the code is checked after the
   * password (so a wrong password never reveals whether 2FA is on); `trustedKey` is the key to answer
   * in `X-SEAFILE-S2FA` (a trusted device, see TwoFactorService.checkSignIn).
   */
  async login(username: string, password: string, extras: LoginExtras = {}): Promise<{ token: string; trustedKey?: string }> {
    const row = await repo.findUserByLogin(this.db, username);
    if (!row) {
      dummyHash ??= hashPassword('not-a-real-password');
      await verifyPassword(password, await dummyHash);
      throw loginError(LOGIN_FAILED);
    }
    if (!(await verifyPassword(password, row.password_hash))) throw loginError(LOGIN_FAILED);
    if (row.is_active !== 1) throw loginError('User account is disabled.');
    const { trustedKey } = await this.twoFactor.checkSignIn(row.id, extras);
    const token = extras.device ? await this.devices.tokenFor(row.id, extras.device, extras.ip ?? '') : await this.tokenFor(row.id);
    return trustedKey === undefined ? { token } : { token, trustedKey };
  }

  /**
   * A sign-in vouched for by an identity provider (OIDC): the user with this e-mail, created on first
   * sign-in (with a random password no one knows) when `create`; `isStaff`, when given, sets the admin
   * flag. A deactivated user is refused. Returns the Account-Token.
   */
  async signInByEmail(email: string, options: { name?: string | undefined; isStaff?: boolean | undefined; create: boolean }): Promise<{ token: string; user: AccountUser; created: boolean }> {
    let row = await repo.findUserByLogin(this.db, email);
    let created = false;
    if (!row) {
      if (!options.create) throw apiErrorForbidden(`No account for ${email}.`);
      const user = await this.createUser({ email, password: randomHex(24), name: options.name, isStaff: options.isStaff });
      row = (await repo.findUserById(this.db, user.id))!;
      created = true;
    } else if (options.isStaff !== undefined && (row.is_staff === 1) !== options.isStaff) {
      await repo.updateUser(this.db, row.id, { is_staff: options.isStaff ? 1 : 0 });
      row = (await repo.findUserById(this.db, row.id))!;
    }
    if (row.is_active !== 1) throw apiErrorForbidden('User account is disabled.');
    return { token: await this.tokenFor(row.id), user: toAccountUser(row), created };
  }

  private async tokenFor(userId: number): Promise<string> {
    let salt = (await repo.findTokenSalt(this.db, userId))?.token_salt;
    if (!salt) {
      const fresh = randomHex(16);
      await repo.insertAccountToken(this.db, {
        user_id: userId,
        token_salt: fresh,
        token_hash: sha256Hex(this.derive(userId, fresh)),
        created_at: this.clock.now(),
      });
      // A concurrent login may have won the insert; use whichever salt is stored.
      salt = (await repo.findTokenSalt(this.db, userId))!.token_salt;
    }
    return this.derive(userId, salt);
  }

  private derive(userId: number, salt: string): string {
    return createHmac('sha256', this.secretKey).update(`account-token:${userId}:${salt}`).digest('hex').slice(0, 40);
  }

  /** The active user owning `token`, or null. */
  async authenticate(token: string): Promise<AccountUser | null> {
    if (!/^[0-9a-f]{40}$/.test(token)) return null;
    const hash = sha256Hex(token);
    let row = await repo.findUserByTokenHash(this.db, hash);
    if (!row) {
      // Not the default token: a device's (one more indexed lookup, only for those).
      const userId = await this.devices.userOf(hash);
      row = userId === null ? undefined : await repo.findSignedInUser(this.db, userId);
    }
    if (!row || row.is_active !== 1) return null;
    return toAccountUser(row);
  }

  async createUser(input: NewUser): Promise<AccountUser> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw badRequest('email invalid.');
    checkPassword(input.password);
    const name = (input.name ?? email.split('@')[0] ?? email).trim().slice(0, 255);
    try {
      const row = await repo.insertUser(this.db, {
        virtual_id: newUserVirtualId(),
        email,
        name,
        password_hash: await hashPassword(input.password),
        is_staff: input.isStaff ? 1 : 0,
        is_active: 1,
        email_notification: 1,
        created_at: this.clock.now(),
      });
      return toAccountUser(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw badRequest(`User ${email} already exists.`);
      throw error;
    }
  }

  /**
   * The user's own password change. The old password must match; the Account-Token is rotated, so
   * the token in use stops working at once (the next login hands out a new one).
   */
  async changePassword(user: AccountUser, oldPassword: string, newPassword: string): Promise<void> {
    const row = await repo.findUserById(this.db, user.id);
    if (!row || !(await verifyPassword(oldPassword, row.password_hash))) throw badRequest('Old password is wrong.');
    await this.storePassword(row.id, newPassword);
  }

  /**
   * An admin changes a user (the original's "Update User"). A new password rotates the user's
   * Account-Token. Everything is validated before anything is written.
   */
  async adminUpdateUser(
    actor: AccountUser,
    login: string,
    changes: { password?: string; name?: string; isStaff?: boolean; isActive?: boolean },
  ): Promise<UserRow> {
    const row = await repo.findUserByLogin(this.db, login);
    if (!row) throw notFound(`User ${login} not found.`);
    const patch: Parameters<typeof repo.updateUser>[2] = {};
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name === '' || name.length > 255) throw badRequest('name invalid.');
      patch.name = name;
    }
    if (changes.isStaff !== undefined) patch.is_staff = changes.isStaff ? 1 : 0;
    if (changes.isActive !== undefined) patch.is_active = changes.isActive ? 1 : 0;
    if (row.id === actor.id && (changes.isStaff === false || changes.isActive === false)) {
      throw badRequest('You cannot demote or deactivate yourself.');
    }
    if (changes.password !== undefined) {
      checkPassword(changes.password);
      patch.password_hash = await hashPassword(changes.password);
    }
    const revokeSignIn = patch.password_hash !== undefined || patch.is_active === 0;
    const followUps = await this.db.transaction().execute(async (trx) => {
      if (Object.keys(patch).length > 0) await repo.updateUser(trx, row.id, patch);
      if (patch.password_hash !== undefined) await repo.deleteAccountToken(trx, row.id);
      if (revokeSignIn) await this.twoFactor.forgetTrustedDevices(trx, row.id);
      return revokeSignIn ? this.revokingSignIn(trx, row.id) : [];
    });
    for (const followUp of followUps) await followUp();
    return (await repo.findUserById(this.db, row.id))!;
  }

  /**
   * Revokes the user's Account-Token: its salt is forgotten, so the next login derives a new one.
   * Account-Tokens are looked up in the database on every request (no cache), so this holds at once
   * on every instance.
   */
  async revokeAccountToken(userId: number): Promise<void> {
    await repo.deleteAccountToken(this.db, userId);
  }

  /** Logout: ends the token in use only (a device's, or the default one). */
  async logout(userId: number, token: string): Promise<void> {
    if (await this.devices.revokeByHash(sha256Hex(token))) return;
    await repo.deleteAccountToken(this.db, userId);
  }

  /**
   * Sets a user's password without the old one (an admin's reset, `basegate reset-password`); the
   * Account-Token is rotated like on any password change. Unknown login → 404.
   */
  async resetPassword(login: string, password: string): Promise<UserRow> {
    const row = await repo.findUserByLogin(this.db, login);
    if (!row) throw notFound(`User ${login} not found.`);
    await this.storePassword(row.id, password);
    return row;
  }

  private async storePassword(userId: number, password: string): Promise<void> {
    checkPassword(password);
    const hash = await hashPassword(password);
    const followUps = await this.db.transaction().execute(async (trx) => {
      await repo.updateUser(trx, userId, { password_hash: hash });
      await repo.deleteAccountToken(trx, userId);
      await this.twoFactor.forgetTrustedDevices(trx, userId);
      return this.revokingSignIn(trx, userId);
    });
    for (const followUp of followUps) await followUp();
  }

  private async revokingSignIn(trx: Executor, userId: number): Promise<Array<() => Promise<void>>> {
    const followUps = [];
    for (const listener of this.signInRevokingListeners) followUps.push(await listener(trx, userId));
    return followUps;
  }

  /** See SignInRevokingListener: a deactivation or a password change. */
  onSignInRevoking(listener: SignInRevokingListener): void {
    this.signInRevokingListeners.push(listener);
  }

  async updateProfile(user: AccountUser, changes: { name?: string; emailNotification?: boolean }): Promise<AccountUser> {
    const patch: Parameters<typeof repo.updateUser>[2] = {};
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name === '' || name.length > 255) throw badRequest('name invalid.');
      patch.name = name;
    }
    if (changes.emailNotification !== undefined) patch.email_notification = changes.emailNotification ? 1 : 0;
    if (Object.keys(patch).length > 0) await repo.updateUser(this.db, user.id, patch);
    return toAccountUser((await repo.findUserById(this.db, user.id))!);
  }

  async listUsers(offset: number, limit: number): Promise<{ users: UserRow[]; total: number }> {
    const [users, total] = await Promise.all([repo.listUsers(this.db, offset, limit), repo.countUsers(this.db)]);
    return { users, total };
  }

  async deleteUser(actor: AccountUser, login: string): Promise<void> {
    const row = await repo.findUserByLogin(this.db, login);
    if (!row) throw notFound(`User ${login} not found.`);
    if (row.id === actor.id) throw badRequest('You cannot delete yourself.');
    // Asked first so a refusal changes nothing (the listeners revoke credentials), then again in the
    // deletion's transaction: what they check may change in between (a base created in the user's group).
    for (const guard of this.deletionGuards) await guard(row.id, row.email, this.db);
    const followUps = [];
    for (const listener of this.deletingListeners) {
      const followUp = await listener(row.id);
      if (followUp) followUps.push(followUp);
    }
    await this.db.transaction().execute(async (trx) => {
      for (const guard of this.deletionGuards) await guard(row.id, row.email, trx);
      await repo.deleteUser(trx, row.id);
    });
    for (const followUp of followUps) await followUp();
  }

  /** Adds a rule that may refuse deleting a user (e.g. the owner of a group others use: groups module). */
  guardUserDeletion(guard: UserDeletionGuard): void {
    this.deletionGuards.push(guard);
  }

  onUserDeleting(listener: UserDeletingListener): void {
    this.deletingListeners.push(listener);
  }

  countUsers(): Promise<number> {
    return repo.countUsers(this.db);
  }

  findUser(login: string): Promise<UserRow | undefined> {
    return repo.findUserByLogin(this.db, login);
  }

  findUsersByVirtualIds(ids: readonly string[]): Promise<UserRow[]> {
    return repo.findUsersByVirtualIds(this.db, ids);
  }

  findUserById(id: number): Promise<UserRow | undefined> {
    return repo.findUserById(this.db, id);
  }
}

function checkPassword(password: unknown): void {
  if (typeof password !== 'string' || password.length < 8 || password.length > 256) {
    throw badRequest('password invalid: 8 to 256 characters.');
  }
}

function apiErrorForbidden(message: string): AppError {
  return apiError(403, message);
}

/** DRF serializer shape: `{"non_field_errors": ["…"]}`. */
export function loginError(message: string): AppError {
  return new AppError(400, { non_field_errors: [message] });
}

