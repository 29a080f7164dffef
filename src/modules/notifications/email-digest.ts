import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { Mailer } from '../../platform/mail/index.js';
import { userById, type UserInfo } from './base-context.repository.js';
import { dueEmailsOf, restoreDueEmails, takeDueEmails, usersWithDueEmail, type DueEmail } from './inbox.repository.js';
import { composeDigest } from './email-message.js';

const USERS_PER_QUERY = 200;

export interface EmailDigestOptions {
  publicUrl: string;
  log?: { error(obj: object, msg: string): void };
}

export interface EmailDigestReport {
  /** Messages sent (one per user at most). */
  mails: number;
  /** Notifications those messages covered. */
  notifications: number;
  /** Notifications whose user does not want e-mail (never mailed later either). */
  skipped: number;
  /** Users whose message failed; their notifications are retried at the next run. */
  failed: number;
}

/**
 * The e-mail fallback: notifications still unread when their `email_due_at` passed are mailed to
 * users with e-mail notification on, one message per user per run. The duty is taken (cleared)
 * before sending, so a notification is mailed at most once; a failed send gives it back for a retry.
 */
export class EmailDigest {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly mailer: Mailer,
    private readonly options: EmailDigestOptions,
  ) {}

  async run(now: number = this.clock.now()): Promise<EmailDigestReport> {
    const report: EmailDigestReport = { mails: 0, notifications: 0, skipped: 0, failed: 0 };
    const done = new Set<number>();
    for (;;) {
      const users = (await usersWithDueEmail(this.db, now, USERS_PER_QUERY + done.size)).filter((id) => !done.has(id));
      if (users.length === 0) break;
      for (const userId of users) {
        done.add(userId);
        await this.runUser(userId, now, report);
      }
    }
    return report;
  }

  private async runUser(userId: number, now: number, report: EmailDigestReport): Promise<void> {
    const [user, due] = await Promise.all([userById(this.db, userId), dueEmailsOf(this.db, userId, now)]);
    if (due.length === 0) return;
    if (!user || user.is_active !== 1 || user.email_notification !== 1) {
      report.skipped += (await takeDueEmails(this.db, due.map((d) => d.id), null)).length;
      return;
    }
    const taken = new Set(await takeDueEmails(this.db, due.map((d) => d.id), now));
    const items: DueEmail[] = due.filter((d) => taken.has(d.id));
    if (items.length === 0) return;
    try {
      await this.mailer.send(composeDigest(user as UserInfo, items, this.options.publicUrl));
      report.mails++;
      report.notifications += items.length;
    } catch (error) {
      report.failed++;
      this.options.log?.error({ err: error, userId }, 'notification e-mail failed; will retry');
      await restoreDueEmails(this.db, items.map((i) => i.id), now);
    }
  }
}
