import { badRequest } from '../../shared/errors.js';
import { SECRET_MASK, type SecretBox } from '../webhooks/index.js';
import type { AutomationAction } from './model.js';

/**
 * `call_webhook` secrets: sealed with the webhooks' SecretBox before the rule is stored, masked in
 * every response, and opened only by the runner when it signs a request.
 */
const SEALED = /^v1:/;

/** Seals new secrets; a masked secret sent back by an update keeps the stored one of the same action. */
export function sealSecrets(secrets: SecretBox, actions: AutomationAction[], previous: AutomationAction[] = []): AutomationAction[] {
  const stored = new Map(previous.filter((a) => typeof a.secret === 'string').map((a) => [a._id, a.secret as string]));
  return actions.map((action, i) => {
    if (action.type !== 'call_webhook' || typeof action.secret !== 'string') return action;
    if (action.secret === SECRET_MASK) {
      const kept = stored.get(action._id);
      if (kept === undefined) throw badRequest(`actions.${i}.secret invalid: ${SECRET_MASK} stands for a stored secret, and action ${action._id} has none.`);
      return { ...action, secret: kept };
    }
    return { ...action, secret: secrets.seal(action.secret) };
  });
}

/** The actions as responses show them: a secret is never returned. */
export function maskSecrets(actions: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return actions.map((a) => (typeof a.secret === 'string' ? { ...a, secret: SECRET_MASK } : a));
}

/** The plain secret to sign with; null when none is set or it cannot be opened (SECRET_KEY changed). */
export function openSecret(secrets: SecretBox, action: AutomationAction): string | null {
  if (typeof action.secret !== 'string' || action.secret === '') return null;
  return SEALED.test(action.secret) ? secrets.open(action.secret) : action.secret;
}
