import type { Config } from './config/index.js';
import { connect, type Db, type DbHandle, type DialectName } from './db/index.js';
import { systemClock, type Clock } from './shared/clock.js';
import { AccountsService } from './modules/accounts/index.js';
import { BaseAccess, BasesService, ExternalLinksService, SharesService } from './modules/workspaces/index.js';
import { AccessTokenService, BaseTokenSigner, BaseTokenVerifier } from './modules/tokens/index.js';

/** Everything the app and the workers share, built once. Tests pass their own clock or database. */
export interface Container {
  config: Config;
  db: Db;
  dialect: DialectName;
  clock: Clock;
  accounts: AccountsService;
  access: BaseAccess;
  bases: BasesService;
  shares: SharesService;
  links: ExternalLinksService;
  accessTokens: AccessTokenService;
  baseTokens: BaseTokenVerifier;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  database?: DbHandle;
}

export function createContainer(config: Config, options: ContainerOptions = {}): Container {
  const handle = options.database ?? connect({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const db = handle.db;
  const clock = options.clock ?? systemClock;
  const accounts = new AccountsService(db, clock, config.secretKey);
  const access = new BaseAccess(db);
  const signer = new BaseTokenSigner(config.secretKey, clock);
  return {
    config,
    db,
    dialect: handle.dialect,
    clock,
    accounts,
    access,
    bases: new BasesService(db, clock, access, accounts),
    shares: new SharesService(db, clock, access, accounts),
    links: new ExternalLinksService(db, clock, access),
    accessTokens: new AccessTokenService(signer, access, config.publicUrl),
    baseTokens: new BaseTokenVerifier(signer, access),
    close: () => handle.close(),
  };
}
