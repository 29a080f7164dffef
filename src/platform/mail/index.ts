export type { MailMessage, Mailer } from './mailer.js';
export { createMailer, FileMailer, MemoryMailer, SmtpMailer } from './mailer.js';
