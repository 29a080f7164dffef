import type { Container } from './container.js';
import { generatePassword } from './modules/accounts/index.js';

/**
 * On a fresh installation (no users), create the first system admin from ADMIN_EMAIL and
 * ADMIN_PASSWORD, or with a generated password that is printed once (and never logged).
 */
export async function ensureAdmin(c: Container, print: (line: string) => void): Promise<void> {
  if ((await c.accounts.countUsers()) > 0) return;
  const password = c.config.adminPassword ?? generatePassword();
  await c.accounts.createUser({ email: c.config.adminEmail, password, name: 'admin', isStaff: true });
  if (c.config.adminPassword) {
    print(`Created admin ${c.config.adminEmail} with the password from ADMIN_PASSWORD.`);
  } else {
    print(`Created admin ${c.config.adminEmail} with password: ${password}`);
    print('This password is shown only once; change it or set ADMIN_PASSWORD before the first start.');
  }
}
