import { isoSeconds } from '../../shared/time.js';
import type { BaseListing, ExternalLinkRow } from './workspaces.repository.js';

/** Wire shape of a base, as dtable-web renders it. */
export function baseRecord(base: BaseListing) {
  return {
    id: base.id,
    workspace_id: base.workspace_id,
    uuid: base.uuid,
    name: base.name,
    creator: base.creator_name,
    modifier: base.modifier_name,
    created_at: isoSeconds(base.created_at),
    updated_at: isoSeconds(base.updated_at),
    color: null,
    text_color: null,
    icon: null,
    is_encrypted: false,
    in_storage: true,
  };
}

export function externalLinkRecord(link: ExternalLinkRow, publicUrl: string, now: number) {
  const path = link.is_custom ? `custom/${link.token}` : link.token;
  return {
    url: `${publicUrl}/dtable/external-links/${path}/`,
    token: link.token,
    is_custom: link.is_custom === 1,
    permission: 'read-only',
    is_expired: link.expire_at !== null && link.expire_at <= now,
    expire_date: isoSeconds(link.expire_at),
    password_protected: link.password_hash !== null,
    create_at: isoSeconds(link.created_at),
  };
}
