import type { ChangeEvent } from '../events/index.js';
import { compileSubscription, matchChange, readSubscription, type CompiledSubscription } from '../subscriptions/index.js';

/** The compiled subscription of each webhook, recompiled when the webhook was saved again. */
export class SubscriptionCache {
  /** TIME_ZONE: "today" of date filters. */
  timeZone = 'UTC';
  private readonly compiled = new Map<number, { version: number; sub: CompiledSubscription }>();

  of(hook: { id: number; subscription: string | null; updated_at: number }): CompiledSubscription {
    const cached = this.compiled.get(hook.id);
    if (cached && cached.version === hook.updated_at) return cached.sub;
    const sub = compileSubscription(readSubscription(hook.subscription));
    if (this.compiled.size > 10_000) this.compiled.clear();
    this.compiled.set(hook.id, { version: hook.updated_at, sub });
    return sub;
  }

  wants(hook: { id: number; subscription: string | null; updated_at: number }, event: ChangeEvent): boolean {
    return hook.subscription === null || matchChange(this.of(hook), event, this.timeZone).match;
  }
}
