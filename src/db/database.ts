import type { Kysely, Transaction } from 'kysely';
import type { AccountTokensTable, UsersTable } from '../modules/accounts/accounts.table.js';
import type {
  BaseMetadataTable,
  BaseSharesTable,
  BasesTable,
  ExternalLinksTable,
  WorkspacesTable,
} from '../modules/workspaces/workspaces.table.js';

/** Every table, assembled from the modules' `*.table.ts` files. */
export interface Database {
  users: UsersTable;
  account_tokens: AccountTokensTable;
  workspaces: WorkspacesTable;
  bases: BasesTable;
  base_shares: BaseSharesTable;
  external_links: ExternalLinksTable;
  base_metadata: BaseMetadataTable;
}

export type Db = Kysely<Database>;
/** The database or a transaction: repositories take this first so writes join the caller's transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';
