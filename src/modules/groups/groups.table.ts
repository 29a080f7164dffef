import type { ColumnType, Generated } from 'kysely';

export interface GroupsTable {
  id: Generated<number>;
  name: string;
  owner_id: number;
  created_at: number;
}

export interface GroupMembersTable {
  group_id: number;
  user_id: number;
  /** 1 for the group's admins (the owner is a member with is_admin 1 too). */
  is_admin: number;
  created_at: number;
}

export interface BaseGroupSharesTable {
  base_id: number;
  group_id: number;
  /** `r`, `rw` or `admin`. */
  permission: string;
  created_at: number;
}

export interface ViewSharesTable {
  id: Generated<number>;
  base_id: number;
  table_id: string;
  view_id: string;
  /** `r` or `rw`. */
  permission: string;
  from_user_id: number;
  /** Exactly one of `to_user_id` and `to_group_id` is set. */
  to_user_id: number | null;
  to_group_id: number | null;
  shared_name: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
}
