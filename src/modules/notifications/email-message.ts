import type { MailMessage } from '../../platform/mail/index.js';
import type { UserInfo } from './base-context.repository.js';
import type { DueEmail } from './inbox.repository.js';
import { isoSeconds } from '../../shared/time.js';

/** At most this many notifications are spelled out in one message; the rest are counted. */
const MAX_LISTED = 50;

interface Entry {
  base: string;
  rule: string;
  message: string;
  link: string;
  time: string;
}

function entryOf(item: DueEmail, publicUrl: string): Entry {
  let detail: Record<string, unknown> = {};
  try {
    detail = JSON.parse(item.detail) as Record<string, unknown>;
  } catch {
    // keep the defaults below
  }
  const base = item.base_name ?? '';
  const link = item.base_name !== null && item.workspace_id !== null ? `${publicUrl}/workspace/${item.workspace_id}/dtable/${encodeURIComponent(item.base_name)}/` : publicUrl;
  return {
    base,
    rule: typeof detail.rule_name === 'string' ? detail.rule_name : '',
    message: typeof detail.msg === 'string' ? detail.msg : item.msg_type === 'selected_collaborator' ? 'You were added to a collaborator cell of a row.' : item.msg_type === 'comment' && typeof detail.comment === 'string' ? `You were mentioned in a comment: ${detail.comment}` : '',
    link,
    time: isoSeconds(item.created_at),
  };
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** One message for one user covering their unread notifications: base, rule, message and a link each. */
export function composeDigest(user: UserInfo, items: DueEmail[], publicUrl: string): MailMessage {
  const entries = items.slice(0, MAX_LISTED).map((i) => entryOf(i, publicUrl));
  const more = items.length - entries.length;
  const first = entries[0]!;
  const subject =
    items.length === 1
      ? `Notification: ${first.rule || 'notification'}${first.base ? ` in ${first.base}` : ''}`
      : `You have ${items.length} unread notifications`;
  const intro = items.length === 1 ? 'You have an unread notification:' : `You have ${items.length} unread notifications:`;
  const textBlocks = entries.map((e) =>
    [`Base: ${e.base}`, `Rule: ${e.rule}`, `Message: ${e.message}`, `Time: ${e.time}`, `Open the base: ${e.link}`].join('\n'),
  );
  const footer = 'You receive this e-mail because e-mail notification is turned on in your personal settings.';
  const text = [`Hello ${user.name},`, '', intro, '', textBlocks.join('\n\n'), ...(more > 0 ? ['', `… and ${more} more.`] : []), '', footer, ''].join('\n');
  const htmlBlocks = entries
    .map(
      (e) =>
        `<li><p><strong>${escapeHtml(e.rule)}</strong> in <strong>${escapeHtml(e.base)}</strong> (${escapeHtml(e.time)})<br>` +
        `${escapeHtml(e.message)}<br><a href="${escapeHtml(e.link)}">Open the base</a></p></li>`,
    )
    .join('');
  const html =
    `<p>Hello ${escapeHtml(user.name)},</p><p>${escapeHtml(intro)}</p><ul>${htmlBlocks}</ul>` +
    (more > 0 ? `<p>… and ${more} more.</p>` : '') +
    `<p>${escapeHtml(footer)}</p>`;
  return { to: user.email, subject, text, html };
}
