import { randomBytes } from 'node:crypto';
import type { AccountsService } from './accounts.service.js';
import type { UserRow } from './accounts.repository.js';

/** A new random password: 16 characters of base64url (96 bits). */
export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * A forgotten password replaced (admin API and `basegate reset-password`): the given one, or a
 * generated one that the caller shows once. The user's Account-Token is rotated.
 */
export async function resetPassword(accounts: AccountsService, login: string, password?: string): Promise<{ user: UserRow; password: string }> {
  const chosen = password ?? generatePassword();
  const user = await accounts.resetPassword(login, chosen);
  return { user, password: chosen };
}
