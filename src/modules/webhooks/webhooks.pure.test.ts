import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../version.js';
import { AppError } from '../../shared/errors.js';
import { ConfigError, loadConfig } from '../../config/index.js';
import { SECRET_MASK, SecretBox } from './secret-box.js';
import { deliveryHeaders } from './signing.js';
import { checkSecret, checkWebhookUrl } from './webhook-url.js';
import { eventBody, pingBody } from './payload.js';
import { naiveDatetime, webhookRecord } from './webhooks.present.js';

describe('deliveryHeaders', () => {
  const body = '{"event": "update", "data": {"x": 1}}';

  it('without a secret: content type, user agent, id and timestamp only', () => {
    expect(deliveryHeaders({ msgId: 'msg_1', timestampSeconds: 1_767_607_200, body, secret: null })).toEqual({
      'content-type': 'application/json',
      'user-agent': `basegate/${VERSION}`,
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1767607200',
    });
    expect(Object.keys(deliveryHeaders({ msgId: 'm', timestampSeconds: 1, body, secret: '' }))).toHaveLength(4);
  });

  it('with a secret: the four signatures over the exact body', () => {
    const secret = 'It’s a secret';
    const h = deliveryHeaders({ msgId: 'msg_abc', timestampSeconds: 1_767_607_200, body, secret });
    expect(h['x-service-signature']).toBe(`sha1=${createHmac('sha1', secret).update(body).digest('hex')}`);
    expect(h['x-service-signature-256']).toBe(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    expect(h['x-seatable-signature']).toBe(h['x-service-signature-256']);
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`msg_abc.1767607200.${body}`).digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    const reference = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).sign('msg_abc', new Date(1_767_607_200_000), body);
    expect(h['webhook-signature']).toBe(reference);
  });

  it('a different body, id or timestamp gives a different signature', () => {
    const base = deliveryHeaders({ msgId: 'a', timestampSeconds: 1, body, secret: 's' });
    expect(deliveryHeaders({ msgId: 'a', timestampSeconds: 1, body: body + ' ', secret: 's' })['x-seatable-signature']).not.toBe(base['x-seatable-signature']);
    expect(deliveryHeaders({ msgId: 'b', timestampSeconds: 1, body, secret: 's' })['webhook-signature']).not.toBe(base['webhook-signature']);
    expect(deliveryHeaders({ msgId: 'a', timestampSeconds: 2, body, secret: 's' })['webhook-signature']).not.toBe(base['webhook-signature']);
  });
});

describe('SecretBox', () => {
  const box = new SecretBox('k'.repeat(40));

  it('round-trips, with a fresh IV each time, and never contains the plain text', () => {
    const a = box.seal('my secret ✓');
    const b = box.seal('my secret ✓');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(a).not.toContain('secret');
    expect(box.open(a)).toBe('my secret ✓');
    expect(box.open(b)).toBe('my secret ✓');
  });

  it('returns null for another key, tampering or garbage', () => {
    const sealed = box.seal('value');
    expect(new SecretBox('x'.repeat(40)).open(sealed)).toBeNull();
    const parts = sealed.split(':');
    // Flip the first character: the last one of base64 may carry only padding bits.
    const flipped = [parts[0], parts[1], parts[2], (parts[3]!.startsWith('A') ? 'B' : 'A') + parts[3]!.slice(1)].join(':');
    expect(box.open(flipped)).toBeNull();
    for (const junk of ['', 'v1', 'v2:a:b:c', 'v1:a:b', 'plain']) expect(box.open(junk)).toBeNull();
  });

  it('the mask reveals nothing of the secret', () => {
    expect(SECRET_MASK).toBe('********');
  });
});

describe('checkWebhookUrl / checkSecret', () => {
  const message = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      return [(error as AppError).statusCode, (error as AppError).body];
    }
    return null;
  };

  it('accepts http and https URLs (any case), trimmed', () => {
    expect(checkWebhookUrl('  https://example.com/hook?a=1  ')).toBe('https://example.com/hook?a=1');
    expect(checkWebhookUrl('HTTP://Example.com')).toBe('HTTP://Example.com');
    expect(checkWebhookUrl('http://user:pw@10.0.0.1:8080/x', { allowPrivate: true })).toBe('http://user:pw@10.0.0.1:8080/x');
    expect(checkWebhookUrl('https://[2001:db8::1]/', { allowPrivate: true })).toBe('https://[2001:db8::1]/');
  });

  it('refuses with 400 what is not an http(s) URL', () => {
    expect(message(() => checkWebhookUrl(undefined))).toEqual([400, { error_msg: 'url is required.' }]);
    expect(message(() => checkWebhookUrl(null))).toEqual([400, { error_msg: 'url is required.' }]);
    expect(message(() => checkWebhookUrl(true))).toEqual([400, { error_msg: 'url invalid.' }]);
    expect(message(() => checkWebhookUrl('file:///etc/passwd'))).toEqual([400, { error_msg: 'url invalid: it must start with http:// or https://.' }]);
    expect(message(() => checkWebhookUrl('https//missing-colon.example'))).toEqual([400, { error_msg: 'url invalid: it must start with http:// or https://.' }]);
    expect(message(() => checkWebhookUrl('https://a.example/\nx'))).toEqual([400, { error_msg: 'url invalid: it contains white space.' }]);
    expect(message(() => checkWebhookUrl('http://:80/'))).toEqual([400, { error_msg: 'url invalid.' }]);
  });

  it('refuses literal loopback, private, link-local and metadata hosts unless allowed', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://0x7f.1:8080/',
      'http://2130706433/',
      'http://10.1.2.3/',
      'https://192.168.0.1/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:0:a9fe:a9fe]/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'http://localhost:3000/',
      'http://api.LOCALHOST/',
    ]) {
      const [status, body] = message(() => checkWebhookUrl(url)) as [number, { error_msg: string }];
      expect(status, url).toBe(400);
      expect(body.error_msg, url).toMatch(/^url invalid: .+ is refused \(.+\); set WEBHOOK_ALLOW_PRIVATE=true to allow it\.$/);
      expect(checkWebhookUrl(url, { allowPrivate: true }), url).toBe(url);
    }
    for (const url of ['https://example.com/', 'http://8.8.8.8/', 'https://[2606:4700::1111]/', 'https://localhost.example.com/']) {
      expect(checkWebhookUrl(url), url).toBe(url);
    }
  });

  it('secret: undefined = unchanged, empty/null = none, numbers become strings', () => {
    expect(checkSecret(undefined)).toBeUndefined();
    expect(checkSecret(null)).toBeNull();
    expect(checkSecret('')).toBeNull();
    expect(checkSecret(123456)).toBe('123456');
    expect(checkSecret(' keep spaces ')).toBe(' keep spaces ');
    expect(message(() => checkSecret(Number.NaN))).toEqual([400, { error_msg: 'secret invalid: it must be a string.' }]);
    expect(message(() => checkSecret(['a']))).toEqual([400, { error_msg: 'secret invalid: it must be a string.' }]);
  });
});

describe('payload and record', () => {
  it('the event body is the original message with op_time in float seconds and op_app', () => {
    const body = eventBody({
      id: 1,
      baseId: 1,
      baseUuid: 'b',
      tableId: 't',
      tableName: 'T',
      rowId: 'r',
      rowName: '',
      opType: 'add_link',
      opUser: 'u@auth.local',
      opApp: null,
      opTime: 1_000_001,
      rowData: [],
      row: { _id: 'r' },
    });
    expect(body).toBe(
      '{"event": "update", "data": {"dtable_uuid": "b", "row_id": "r", "op_user": "u@auth.local", "op_type": "add_link", ' +
        '"op_time": 1000.001, "table_id": "t", "table_name": "T", "row_name": "", "row_data": [], "op_app": null}}',
    );
    expect(JSON.parse(pingBody({ baseUuid: 'b', webhookId: 3, opUser: 'u', now: 2000 }))).toEqual({
      event: 'ping',
      data: { dtable_uuid: 'b', webhook_id: 3, op_user: 'u', op_type: 'ping', op_time: 2 },
    });
  });

  it('the record shows created_at as the original does and masks the secret', () => {
    expect(naiveDatetime(Date.UTC(2021, 2, 16, 14, 27, 58, 873))).toBe('2021-03-16T14:27:58.873000');
    const row = {
      id: 4,
      base_id: 1,
      url: 'https://x.example',
      url_hash: 'h',
      secret: 'v1:sealed',
      creator_id: 1,
      creator: 'c@auth.local',
      created_at: 0,
      updated_at: 0,
      is_valid: 0,
      failure_streak: 5,
      invalid_reason: 'r',
      start_event_id: 0,
      last_claimed_at: null,
      subscription: null,
      previous_secret: null,
      previous_secret_until: null,
      max_rate: null,
      paced_until: null,
    };
    expect(webhookRecord(row, 'uuid')).toEqual({
      id: 4,
      dtable_uuid: 'uuid',
      url: 'https://x.example',
      creator: 'c@auth.local',
      created_at: '1970-01-01T00:00:00.000000',
      is_valid: false,
      settings: { secret: '********' },
    });
    expect(webhookRecord({ ...row, secret: null }, 'uuid').settings).toEqual({});
  });
});

describe('webhook configuration', () => {
  const env = { SECRET_KEY: 's'.repeat(40), DATA_DIR: '/nonexistent' };
  const load = (extra: Record<string, string>) => loadConfig({ ...env, ...extra }, { persistSecret: false });

  it('defaults: 15 s timeout, guard on, the documented schedule, 30 days, 256 at once, 32 lanes, 3 s stale worker', () => {
    const config = load({});
    expect(config.webhookTimeoutMs).toBe(15_000);
    expect(config.webhookAllowPrivate).toBe(false);
    expect(config.webhookRetrySchedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(config.webhookRetentionDays).toBe(30);
    expect(config.webhookConcurrency).toBe(512);
    expect(config.webhookLanes).toBe(32);
    expect(config.webhookWorkerStaleMs).toBe(3_000);
  });

  it('reads the variables', () => {
    const config = load({
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: ' 500ms, 1s,2m ,3h,1d ',
      WEBHOOK_RETENTION_DAYS: '7',
      WEBHOOK_CONCURRENCY: '4',
    });
    expect(config).toMatchObject({ webhookTimeoutMs: 2500, webhookAllowPrivate: true, webhookRetentionDays: 7, webhookConcurrency: 4 });
    expect(config.webhookRetrySchedule).toEqual([500, 1000, 120_000, 10_800_000, 86_400_000]);
    expect(load({ WEBHOOK_RETRY_SCHEDULE: '' }).webhookRetrySchedule).toEqual([]);
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', '5x'],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m'],
    ['WEBHOOK_RETRY_SCHEDULE', '-5s'],
    ['WEBHOOK_RETRY_SCHEDULE', '8d'],
    ['WEBHOOK_TIMEOUT_MS', '50'],
    ['WEBHOOK_TIMEOUT_MS', 'soon'],
    ['WEBHOOK_ALLOW_PRIVATE', 'maybe'],
    ['WEBHOOK_RETENTION_DAYS', '0'],
    ['WEBHOOK_CONCURRENCY', '2000'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(name);
  });
});
