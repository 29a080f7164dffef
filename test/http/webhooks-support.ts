import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendEvents, type NewChangeEvent } from '../../src/modules/events/index.js';
import type { DialectName } from '../../src/db/index.js';
import type { TestApp, TestBase, TestUser } from '../helpers/index.js';
import { basePath, createBase, createTestApp, createUser } from '../helpers/index.js';

/** One request a receiver got, with the raw body bytes as text. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the sender must time out). */
  hang?: boolean;
  /** Answer after this many (real) milliseconds. */
  delayMs?: number;
  /** Answer only once this settles (then after `delayMs`, if any). */
  after?: Promise<unknown>;
}

/**
 * A real HTTP receiver on 127.0.0.1. `reply` decides each answer (default 200 "ok"); `replies`
 * queues answers for the next requests before falling back to `reply`.
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly replies: Reply[] = [];
  reply: (request: Received) => Reply = () => ({ status: 200, body: 'ok' });
  /** Requests open at once, now and at most, per path and in total. */
  readonly open = new Map<string, number>();
  readonly maxOpen = new Map<string, number>();
  maxOpenTotal = 0;
  private server: Server | null = null;
  private readonly hanging = new Set<import('node:http').ServerResponse>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      const path = req.url ?? '';
      this.open.set(path, (this.open.get(path) ?? 0) + 1);
      this.maxOpen.set(path, Math.max(this.maxOpen.get(path) ?? 0, this.open.get(path)!));
      this.maxOpenTotal = Math.max(this.maxOpenTotal, [...this.open.values()].reduce((a, b) => a + b, 0));
      res.on('close', () => this.open.set(path, this.open.get(path)! - 1));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.received.push(request);
        const answer = this.replies.shift() ?? this.reply(request);
        if (answer.hang) {
          this.hanging.add(res);
          return;
        }
        const send = () => {
          res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
          res.end(answer.body ?? '');
        };
        const delayed = () => (answer.delayMs ? setTimeout(send, answer.delayMs) : send());
        if (answer.after) void answer.after.then(delayed, delayed);
        else delayed();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  bodies(): Array<{ event: string; data: Record<string, unknown> }> {
    return this.received.map((r) => JSON.parse(r.body) as { event: string; data: Record<string, unknown> });
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

let counter = 0;

/** A synthetic change event of `base` (as the rows module writes them). */
/** A webhook suite's app (private receivers allowed, `env` on top) and the owner of its bases. */
export async function webhookApp(dialect: DialectName, env: Record<string, string> = {}): Promise<{ t: TestApp; owner: TestUser }> {
  const t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', ...env });
  return { t, owner: await createUser(t) };
}

/** A fresh base of `owner` and a listening receiver, for each test of a webhook suite. */
export async function freshTarget(t: TestApp, owner: TestUser): Promise<{ base: TestBase; receiver: Receiver }> {
  return { base: await createBase(t, owner), receiver: await new Receiver().start() };
}

export function changeEvent(base: Pick<TestBase, 'id' | 'uuid'>, overrides: Partial<NewChangeEvent> = {}): NewChangeEvent {
  counter++;
  return {
    baseId: base.id,
    baseUuid: base.uuid,
    tableId: '0000',
    tableName: 'Table1',
    rowId: `row${String(counter).padStart(19, '0')}`,
    rowName: `Row ${counter}`,
    opType: 'insert_row',
    opUser: 'someone@auth.local',
    opApp: null,
    opTime: 1_767_607_200_123,
    rowData: [{ column_key: '0000', column_name: 'Name', column_type: 'text', column_data: null, value: `Row ${counter}`, old_value: null }],
    row: { _id: `row${counter}`, '0000': `Row ${counter}` },
    ...overrides,
  };
}

/** Commit events through the outbox and let the dispatcher hand them to the webhook consumer. */
export async function emit(t: TestApp, events: NewChangeEvent[]): Promise<void> {
  await t.container.db.transaction().execute((trx) => appendEvents(trx, t.dialect, events, t.clock.now()));
  const report = await t.container.dispatcher.runOnce();
  if (report.failed.length > 0) throw report.failed[0]!.error as Error;
}

/** Run delivery rounds until nothing due is left (retries in the future stay queued). */
export async function drain(t: TestApp, maxRounds = 1000): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxRounds; i++) {
    const n = await t.container.webhooks.deliverer.runOnce();
    if (n === 0) return total;
    total += n;
  }
  throw new Error('delivery did not settle');
}

export async function createWebhook(t: TestApp, user: TestUser, base: TestBase, payload: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: user.token, payload });
  if (res.statusCode !== 200) throw new Error(`create webhook failed: ${res.statusCode} ${res.body}`);
  return res.json<{ webhook: { id: number; url: string; is_valid: boolean } }>().webhook;
}

export interface DeliveryView {
  id: number;
  webhook_msg_id: string;
  status: string;
  kind: string;
  attempt_count: number;
  next_attempt_at: string;
  last_error: string | null;
  last_status_code: number | null;
  redelivery_of: number | null;
  event_id: number | null;
  request_body: string;
  attempts: Array<{ attempt: number; status_code: number | null; outcome: string; error: string | null; response_excerpt: string | null; latency_ms: number; time: string; next_attempt_at: string }>;
}

export async function deliveryLog(t: TestApp, user: TestUser, base: TestBase, webhookId: number, query = '') {
  const res = await t.request({ method: 'GET', url: basePath(base, `webhooks/${webhookId}/deliveries/${query}`), token: user.token });
  if (res.statusCode !== 200) throw new Error(`delivery log failed: ${res.statusCode} ${res.body}`);
  return res.json<{ delivery_list: DeliveryView[]; total_count: number }>();
}
