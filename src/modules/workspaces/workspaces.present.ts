import { isoSeconds } from '../../shared/time.js';
import type { BaseListing } from '../access/index.js';
import type { ExternalLinkRow } from './workspaces.repository.js';

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

/**
 * A link as the API shows it. The token (and so the URL) is known only when the link is created
 * (`token`); listings show it masked but for its last four characters, like API-Tokens.
 */
export function externalLinkRecord(link: ExternalLinkRow, publicUrl: string, now: number, token?: string) {
  const shown = token ?? maskedLinkToken(link);
  const path = link.is_custom ? `custom/${shown}` : shown;
  return {
    url: `${publicUrl}/dtable/external-links/${path}/`,
    token: shown,
    is_custom: link.is_custom === 1,
    permission: 'read-only',
    is_expired: link.expire_at !== null && link.expire_at <= now,
    expire_date: isoSeconds(link.expire_at),
    password_protected: link.password_hash !== null,
    create_at: isoSeconds(link.created_at),
  };
}

function maskedLinkToken(link: ExternalLinkRow): string {
  return '*'.repeat(link.is_custom ? 8 : 20 - link.token_hint.length) + link.token_hint;
}
