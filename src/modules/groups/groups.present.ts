import { isoSeconds } from '../../shared/time.js';
import type { GroupRow, MemberRow } from './groups.repository.js';
import type { GroupView } from './groups.service.js';
import type { ViewShareListing } from './shares.repository.js';

/** A group as dtable-web shows it (`get_group_info`). */
export function groupRecord({ group, members }: GroupView) {
  const owner = members.find((m) => m.user_id === group.owner_id);
  return {
    id: group.id,
    parent_group_id: 0,
    name: group.name,
    owner: owner?.virtual_id ?? '',
    created_at: isoSeconds(group.created_at),
    avatar_url: '',
    admins: members.filter((m) => m.is_admin === 1).map((m) => m.virtual_id),
    member_count: members.length,
  };
}

export function adminGroupRecord(group: GroupRow, owner: { virtual_id: string; name: string } | undefined) {
  return {
    id: group.id,
    name: group.name,
    owner: owner?.virtual_id ?? '',
    owner_name: owner?.name ?? '',
    created_at: isoSeconds(group.created_at),
    quota: -1,
    parent_group_id: 0,
    size: 0,
  };
}

export function roleName(member: Pick<MemberRow, 'user_id' | 'owner_id' | 'is_admin'>): 'Owner' | 'Admin' | 'Member' {
  if (member.user_id === member.owner_id) return 'Owner';
  return member.is_admin === 1 ? 'Admin' : 'Member';
}

/** A member as dtable-web shows it (`get_group_member_info`). */
export function memberRecord(member: MemberRow) {
  return {
    group_id: member.group_id,
    name: member.name,
    email: member.virtual_id,
    contact_email: member.email,
    login_id: '',
    avatar_url: '',
    is_admin: member.is_admin === 1,
    role: roleName(member),
  };
}

/** A view share (user or group kind) as the original lists it. */
export function viewShareRecord(share: ViewShareListing) {
  return {
    id: share.id,
    dtable_name: share.dtable_name,
    workspace_id: share.workspace_id,
    from_user: share.from_user,
    from_user_name: share.from_user_name,
    ...(share.to_user_id !== null ? { to_user: share.to_user ?? '', to_user_name: share.to_user_name ?? '' } : {}),
    ...(share.to_group_id !== null ? { to_group_id: String(share.to_group_id), to_group_name: share.to_group_name ?? '' } : {}),
    permission: share.permission,
    table_id: share.table_id,
    view_id: share.view_id,
    shared_name: share.shared_name,
    color: null,
    text_color: null,
    icon: null,
  };
}
