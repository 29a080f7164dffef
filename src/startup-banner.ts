import type { AddressInfo } from 'node:net';
import type { Config } from './config/index.js';

/**
 * What `basegate serve` prints once, after it listens: where the console and the API reference
 * are, and how to sign in. No secret is in it (a generated first password is printed once by
 * ensureAdmin, before).
 */
export function startupBanner(config: Config, address: AddressInfo | string | null, version: string): string {
  const url = consoleUrl(config, address);
  const password = config.adminPassword
    ? 'the password in ADMIN_PASSWORD'
    : 'the password printed when the admin was created (first start)';
  return [
    '',
    `  basegate ${version} is running`,
    '',
    `  Console        ${url}/`,
    `  API reference  ${url}/api/docs/`,
    `  Sign in as     ${config.adminEmail} with ${password}`,
    `  Forgot it?     basegate reset-password ${config.adminEmail}`,
    '',
  ].join('\n') + '\n';
}

/** PUBLIC_URL when it is set, else the address actually listened on (PORT=0 picks a free port). */
function consoleUrl(config: Config, address: AddressInfo | string | null): string {
  if (process.env.PUBLIC_URL || !address || typeof address === 'string') return config.publicUrl.replace(/\/$/, '');
  const host = address.address === '0.0.0.0' || address.address === '::' ? 'localhost' : address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
