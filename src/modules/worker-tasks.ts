import crypto from 'node:crypto';
import type { Deps } from '../platform/deps.js';
import { purgeIdempotencyKeys } from '../platform/http/idempotency.js';
import type { WorkerTask } from '../platform/workers.js';
import { runDueSettlements } from './bank-transfers/index.js';
import { expireDueLinks } from './compliance/index.js';

/** Every background task of the program, run by `openbaas serve` (unless --no-workers) and `openbaas worker`. */
export function workerTasks(deps: Deps): WorkerTask[] {
  return [
    { name: 'purge-idempotency-keys', intervalMs: 15 * 60_000, run: () => purgeIdempotencyKeys(deps) },
    // Polling cadence only: whether a link is due is decided by the injected clock.
    // Polling cadence only: whether a bank payment is due is decided by the injected clock.
    { name: 'settle-bank-transfers', intervalMs: 1_000, run: () => runDueSettlements(deps) },
    { name: 'expire-kyc-links', intervalMs: 30_000, run: () => expireDueLinks(deps.db, deps.clock.now(), () => crypto.randomUUID()) },
  ];
}
