import type { ColumnType, Generated } from 'kysely';

export interface WorkspacesTable {
  id: Generated<number>;
  owner_id: number;
  type: string;
  created_at: number;
  /** The group whose workspace this is (type `group`, migration 0028); null for personal workspaces. */
  group_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface BasesTable {
  id: Generated<number>;
  uuid: string;
  workspace_id: number;
  name: string;
  creator_id: number;
  modifier_id: number;
  created_at: number;
  updated_at: number;
  /** Set while the base is in the trash (migration 0027_trash); every access path treats it as deleted then. */
  deleted_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** The base's name while it is in the trash (`name` holds a placeholder). */
  trashed_name: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface BaseSharesTable {
  base_id: number;
  user_id: number;
  /** `r`, `rw` or `admin`. */
  permission: string;
  created_at: number;
}

export interface ExternalLinksTable {
  id: Generated<number>;
  base_id: number;
  /** SHA-256 (hex) of the link's token; the token itself is never stored (migration 0013). */
  token: string;
  /** The token's last four characters, for listings. */
  token_hint: string;
  is_custom: number;
  password_hash: string | null;
  expire_at: number | null;
  creator_id: number;
  created_at: number;
}

export interface BaseMetadataTable {
  base_id: number;
  /** Bumped on every structural change (tables, columns, views). */
  version: number;
  /** JSON document of the base's tables, columns and views (see modules/rows). */
  data: string;
  /** Bumped by every committed write to the base: rows, links or structure. */
  revision: Generated<number>;
}
