import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config/index.js';

const base = { SECRET_KEY: 'x'.repeat(40), DATA_DIR: '/tmp/basegate-config-test' };
const load = (env: Record<string, string>) => loadConfig({ ...base, ...env }, { persistSecret: false });

describe('notification settings in the configuration', () => {
  it('has the documented defaults', () => {
    const config = load({});
    expect(config.timeZone).toBe('UTC');
    expect(config.notificationEmailDelayMinutes).toBe(120);
    expect(config.notificationDedupMinutes).toBe(5);
    expect(config.smtpUrl).toBeNull();
    expect(config.mailFrom).toBe('basegate <no-reply@localhost>');
  });

  it('reads the variables', () => {
    const config = load({
      TIME_ZONE: 'Europe/Berlin',
      NOTIFICATION_EMAIL_DELAY_MINUTES: '60',
      NOTIFICATION_DEDUP_MINUTES: '0',
      SMTP_URL: 'smtps://user:pass@mail.example.com:465',
      MAIL_FROM: 'noreply@example.com',
    });
    expect(config).toMatchObject({
      timeZone: 'Europe/Berlin',
      notificationEmailDelayMinutes: 60,
      notificationDedupMinutes: 0,
      smtpUrl: 'smtps://user:pass@mail.example.com:465',
      mailFrom: 'noreply@example.com',
    });
  });

  it.each<[Record<string, string>, string]>([
    [{ TIME_ZONE: 'Mars/Olympus' }, 'TIME_ZONE'],
    [{ NOTIFICATION_EMAIL_DELAY_MINUTES: '-1' }, 'NOTIFICATION_EMAIL_DELAY_MINUTES'],
    [{ NOTIFICATION_DEDUP_MINUTES: 'five' }, 'NOTIFICATION_DEDUP_MINUTES'],
    [{ NOTIFICATION_DEDUP_MINUTES: '20000' }, 'NOTIFICATION_DEDUP_MINUTES'],
    [{ SMTP_URL: 'http://mail.example.com' }, 'SMTP_URL'],
    [{ MAIL_FROM: 'nobody' }, 'MAIL_FROM'],
  ])('refuses %o naming %s', (env, variable) => {
    expect(() => load(env)).toThrow(ConfigError);
    expect(() => load(env)).toThrow(variable);
  });
});
