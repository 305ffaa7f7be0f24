import crypto from 'node:crypto';
import type { SecurityCase } from './types.js';

const url = '/v1/sandbox/webhooks/faults';

/**
 * Security cases of webhook fault injection (sandbox): the routes name no resource (each acts on
 * the caller's own settings). PUT varies its body so the suite can check Idempotency-Key reuse.
 */
export const sandboxWebhookFaultSecurityCases: SecurityCase[] = [
  { method: 'GET', route: url, ownsResource: false, prepare: () => Promise.resolve({ url }) },
  {
    method: 'PUT',
    route: url,
    ownsResource: false,
    prepare: () => Promise.resolve({ url, body: { duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: crypto.randomInt(1, 600_000) } }),
  },
  { method: 'DELETE', route: url, ownsResource: false, prepare: () => Promise.resolve({ url }) },
];
