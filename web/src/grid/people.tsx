import { useQuery } from '@tanstack/react-query';
import { gateway, type BaseAccess } from './base';
import { t } from '../i18n';

export interface RelatedUser {
  /** The user's id as stored in collaborator cells and comments (`…@auth.local`). */
  email: string;
  name: string;
  contact_email: string;
}

/** Who can see the base: collaborator choices, comment authors, people to @mention. */
export function useRelatedUsers(access: BaseAccess | undefined, options: { refetchOnMount?: 'always' | boolean; enabled?: boolean } = {}) {
  return useQuery(['related-users', access?.dtable_uuid], () => gateway<{ user_list: RelatedUser[] }>(access!, 'related-users/').then((r) => r.user_list), {
    enabled: access !== undefined && options.enabled !== false,
    refetchOnMount: options.refetchOnMount ?? true,
    staleTime: 60_000,
  });
}

function initials(user: RelatedUser): string {
  const words = (user.name || user.contact_email || user.email).split(/[\s@._-]+/).filter(Boolean);
  return words.slice(0, 2).map((w) => w[0]!.toUpperCase()).join('');
}

/** A round badge with the user's initials, in a colour derived from the id (stable across renders). */
export function Avatar({ user }: { user: RelatedUser }) {
  let hash = 0;
  for (const ch of user.email) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return (
    <span className="avatar" aria-hidden="true" style={{ background: `hsl(${hash % 360} 55% 42%)` }}>
      {initials(user)}
    </span>
  );
}

/** A collaborator as shown in a cell: avatar and name, or the raw id for someone unknown. */
export function Person({ id, people }: { id: string; people: ReadonlyMap<string, RelatedUser> }) {
  const user = people.get(id);
  if (!user) return <span className="person unknown" title={t('collaborator.unknown')}>{id}</span>;
  return (
    <span className="person" title={user.contact_email}>
      <Avatar user={user} />
      {user.name || user.contact_email}
    </span>
  );
}
