import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Transporter } from 'nodemailer';
import type nodemailerModule from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** The port the notification e-mail digest sends through. */
export interface Mailer {
  /** Human-readable destination for logs (`smtp://host:port`, a directory, `memory`). */
  readonly describe: string;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  /** SMTP_URL; null writes JSON lines under `<dataDir>/mail/`. */
  smtpUrl: string | null;
  /** MAIL_FROM */
  from: string;
  dataDir: string;
  /** Clock of the file mailer's timestamps and file names (ms). */
  now?: () => number;
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) return new SmtpMailer(options.smtpUrl, options.from);
  return new FileMailer(path.join(options.dataDir, 'mail'), options.from, options.now);
}

/** Real SMTP through nodemailer; one pooled transport per process. */
export class SmtpMailer implements Mailer {
  readonly describe: string;
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    const parsed = new URL(url);
    this.describe = `${parsed.protocol}//${parsed.host}`;
    // Loaded only with SMTP_URL: without it mails go to files and nodemailer's memory is never paid.
    const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof nodemailerModule;
    // Timeouts keep a stuck mail server from holding the digest tick (and its lease) for long.
    this.transport = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections: 2,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as Parameters<typeof nodemailerModule.createTransport>[0]);
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, ...message });
  }

  close(): void {
    this.transport.close();
  }
}

/** Without SMTP: one JSON line per message in `<dir>/mail-YYYY-MM-DD.jsonl`, for development and audits. */
export class FileMailer implements Mailer {
  readonly describe: string;

  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly now: () => number = Date.now,
  ) {
    this.describe = dir;
  }

  async send(message: MailMessage): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const at = new Date(this.now());
    const line = JSON.stringify({ date: at.toISOString(), from: this.from, ...message });
    await appendFile(path.join(this.dir, `mail-${at.toISOString().slice(0, 10)}.jsonl`), line + '\n', 'utf8');
  }

  close(): void {}
}

/** Keeps messages in memory (unit tests of code that mails). */
export class MemoryMailer implements Mailer {
  readonly describe = 'memory';
  readonly sent: MailMessage[] = [];

  async send(message: MailMessage): Promise<void> {
    this.sent.push(message);
  }

  close(): void {}
}
