import crypto from 'node:crypto';
import type { Deps } from '../platform/deps.js';
import { purgeIdempotencyKeys } from '../platform/http/idempotency.js';
import type { WorkerLogger, WorkerTask } from '../platform/workers.js';
import { timerKinds } from './timer-kinds.js';
import { runDueTimers } from './timers/index.js';
import { DeliveryWorker, purgeOldDeliveries } from './webhooks/index.js';
import { mineDueBlocks } from './crypto/index.js';
import { purgeOldApiRequests } from './traces/index.js';

/**
 * Every background task of the program, run by `openbaas serve` (unless --no-workers) and
 * `openbaas worker`; `logger` hears of the failures a task recovers from by itself.
 */
export function workerTasks(deps: Deps, logger?: WorkerLogger): WorkerTask[] {
  const webhookDelivery = new DeliveryWorker(deps, logger ? { logger } : {});
  return [
    { name: 'purge-idempotency-keys', intervalMs: 15 * 60_000, run: () => purgeIdempotencyKeys(deps) },
    // Polling cadence only: whether a timer (bank settlement, KYC link expiry, ...) is due is decided by its client's clock.
    { name: 'run-due-timers', intervalMs: 1_000, run: () => runDueTimers(deps.db, deps.clock, timerKinds, { newTraceId: () => crypto.randomUUID() }) },
    // run() keeps delivering until stop(); the interval only spaces restarts after an error.
    { name: 'webhook-delivery', intervalMs: 1000, run: () => webhookDelivery.run(), stop: () => webhookDelivery.stop() },
    { name: 'purge-webhook-deliveries', intervalMs: 60 * 60_000, run: () => purgeOldDeliveries(deps) },
    // The request log (GET /v1/traces/:traceId) is kept as long as the events.
    { name: 'purge-api-requests', intervalMs: 60 * 60_000, run: () => purgeOldApiRequests(deps) },
    // Sandbox chains: one block per network per OPENBAAS_SANDBOX_BLOCK_SECONDS of each client's clock (off when 0).
    ...(deps.config.mode === 'sandbox' && deps.config.sandboxBlockSeconds > 0
      ? [{ name: 'mine-sandbox-blocks', intervalMs: 1_000, run: () => mineDueBlocks(deps, deps.config.sandboxBlockSeconds) }]
      : []),
  ];
}
