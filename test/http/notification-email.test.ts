import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, TEST_PUBLIC_URL, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, createRule, dispatch, inbox, modifiedRule, ruleBase, share, updateRow, type RuleBase } from './notification-fixtures.js';

interface Received {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** The text and html parts of a nodemailer message (quoted-printable or base64), enough for assertions. */
function parseMail(raw: string): { subject: string; text: string; html: string } {
  const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(raw)?.[1]?.replace(/\r\n[ \t]/g, ' ') ?? '';
  const parts = raw.split(/\r\n--[^\r\n]+\r\n/);
  const decode = (part: string) => {
    const [head = '', ...rest] = part.split('\r\n\r\n');
    const body = rest.join('\r\n\r\n').replace(/\r\n--[^\r\n]+--\s*$/, '');
    if (/Content-Transfer-Encoding: base64/i.test(head)) return Buffer.from(body.replace(/\s/g, ''), 'base64').toString('utf8');
    if (/Content-Transfer-Encoding: quoted-printable/i.test(head)) {
      const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      return Buffer.from(bytes, 'latin1').toString('utf8');
    }
    return body;
  };
  const find = (type: string) => decode(parts.find((p) => new RegExp(`Content-Type: ${type}`, 'i').test(p)) ?? '');
  return { subject, text: find('text/plain'), html: find('text/html') };
}

describe.each(DIALECTS)('notification rules: the e-mail fallback over real SMTP (%s)', (dialect) => {
  let t: TestApp;
  let smtp: SMTPServer;
  let received: Received[] = [];
  let rejectMail = false;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let base: RuleBase;

  const digest = async () => {
    const outcome = await t.container.scheduler.runOnce('notification-email');
    expect(outcome.ran).toBe(true);
    return (outcome as { result: { mails: number; notifications: number; skipped: number; failed: number } }).result;
  };
  const mailsTo = (user: TestUser) => received.filter((m) => m.to.includes(user.email));

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (rejectMail) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 450 }));
          const parsed = parseMail(Buffer.concat(chunks).toString('utf8'));
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), ...parsed });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await createTestApp(dialect, { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Basegate <noreply@basegate.test>' });
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    carol = await createUser(t, { name: 'Carol' });
    base = await ruleBase(t, alice, 'Sales pipeline');
    await share(t, alice, base, bob, 'rw');
    await share(t, alice, base, carol, 'rw');
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId, carol.virtualId], { rule_name: 'Deal moved' }, { default_msg: '{Name} moved to {Status}' }));
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });
  beforeEach(async () => {
    await digest(); // settle whatever earlier tests left due
    received = [];
    rejectMail = false;
    t.clock.advance(24 * 60 * 60_000);
  });

  const change = async (names: string[]) => {
    base.token = await baseToken(t, alice, base); // the clock moves days ahead between tests
    const ids = await addRows(t, base, names.map((Name) => ({ Name })));
    for (const id of ids) await updateRow(t, base, id, { Status: 'Done' });
    await dispatch(t);
    return ids;
  };

  it('mails an unread notification after two hours, once, naming the base, rule and message with a link', async () => {
    await change(['Acme deal']);
    t.clock.advance(119 * 60_000);
    expect((await digest()).mails).toBe(0);
    expect(received).toEqual([]);

    t.clock.advance(60_000);
    const report = await digest();
    expect(report).toMatchObject({ mails: 2, notifications: 2, failed: 0 }); // Bob and Carol
    const [mail] = mailsTo(bob);
    expect(mail).toBeDefined();
    expect(mail!.from).toBe('noreply@basegate.test');
    expect(mail!.subject).toBe('Notification: Deal moved in Sales pipeline');
    const link = `${TEST_PUBLIC_URL}/workspace/${base.workspaceId}/dtable/Sales%20pipeline/`;
    expect(mail!.text).toContain('Hello Bob,');
    expect(mail!.text).toContain('Base: Sales pipeline');
    expect(mail!.text).toContain('Rule: Deal moved');
    expect(mail!.text).toContain('Message: Acme deal moved to Done');
    expect(mail!.text).toContain(`Open the base: ${link}`);
    expect(mail!.html).toContain(`href="${link}"`);

    t.clock.advance(10 * 60_000);
    expect((await digest()).mails).toBe(0); // at most once per notification
    expect(received).toHaveLength(2);
  });

  it('groups every due notification of a user into one message per run', async () => {
    await change(['One', 'Two', 'Three']);
    t.clock.advance(121 * 60_000);
    await digest();
    const bobs = mailsTo(bob);
    expect(bobs).toHaveLength(1);
    expect(bobs[0]!.subject).toBe('You have 3 unread notifications');
    for (const name of ['One', 'Two', 'Three']) expect(bobs[0]!.text).toContain(`Message: ${name} moved to Done`);
  });

  it('read in time: reading before the delay cancels the e-mail', async () => {
    await change(['Read me']);
    t.clock.advance(60 * 60_000);
    const mark = await t.request({ method: 'PUT', url: '/api/v2.1/notifications/', token: bob.token, payload: {} });
    expect(mark.statusCode).toBe(200);
    const [notice] = await inbox(t, bob);
    expect(notice!.seen).toBe(true);
    // Marking it unread again does not bring the e-mail back.
    const unread = await t.request({
      method: 'PUT',
      url: `/api-gateway/api/v2/dtables/${base.uuid}/notifications/${notice!.id}/`,
      token: await baseToken(t, bob, base),
      payload: { seen: 'false' },
    });
    expect(unread.statusCode, unread.body).toBe(200);
    expect((await inbox(t, bob))[0]!.seen).toBe(false);
    t.clock.advance(61 * 60_000);
    await digest();
    expect(mailsTo(bob)).toEqual([]);
    expect(mailsTo(carol)).toHaveLength(1);
  });

  it('e-mail disabled: nothing is mailed, not even after turning it on again', async () => {
    const off = await t.request({ method: 'PUT', url: '/api/v2.1/user/', token: carol.token, payload: { email_notification: false } });
    expect(off.statusCode, off.body).toBe(200);
    await change(['Quiet']);
    t.clock.advance(121 * 60_000);
    const report = await digest();
    expect(report.skipped).toBe(1);
    expect(mailsTo(carol)).toEqual([]);
    expect(mailsTo(bob)).toHaveLength(1);
    const on = await t.request({ method: 'PUT', url: '/api/v2.1/user/', token: carol.token, payload: { email_notification: true } });
    expect(on.statusCode).toBe(200);
    t.clock.advance(10 * 60_000);
    await digest();
    expect(mailsTo(carol)).toEqual([]);
  });

  it('retries at the next run when the mail server refuses the message', async () => {
    await change(['Retry']);
    t.clock.advance(121 * 60_000);
    rejectMail = true;
    const failed = await digest();
    expect(failed).toMatchObject({ mails: 0, failed: 2 });
    rejectMail = false;
    t.clock.advance(5 * 60_000);
    const retried = await digest();
    expect(retried).toMatchObject({ mails: 2, failed: 0 });
    expect(mailsTo(bob)).toHaveLength(1);
  });
});

describe.each(DIALECTS)('notification rules: e-mail without SMTP goes to DATA_DIR/mail (%s)', (dialect) => {
  it('writes one JSON line per message', async () => {
    const t = await createTestApp(dialect, { NOTIFICATION_EMAIL_DELAY_MINUTES: '0' });
    try {
      const alice = await createUser(t, { name: 'Alice' });
      const bob = await createUser(t, { name: 'Bob' });
      const base = await ruleBase(t, alice, 'Spool');
      await share(t, alice, base, bob, 'r');
      await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
      const [id] = await addRows(t, base, [{ Name: 'spooled' }]);
      await updateRow(t, base, id!, { Notes: 'x' });
      await dispatch(t);
      expect(await t.container.scheduler.runOnce('notification-email')).toMatchObject({ ran: true, result: { mails: 1 } });
      const dir = path.join(t.config.dataDir, 'mail');
      const files = readdirSync(dir);
      expect(files).toEqual(['mail-2026-01-05.jsonl']);
      const lines = readFileSync(path.join(dir, files[0]!), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ to: bob.email, subject: 'Notification: Changes in Spool' });
      expect(lines[0]!.text).toContain('Message: Row spooled changed');
    } finally {
      await t.close();
    }
  });
});
