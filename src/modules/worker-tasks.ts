import type { Deps } from '../platform/deps.js';
import { purgeIdempotencyKeys } from '../platform/http/idempotency.js';
import type { WorkerTask } from '../platform/workers.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';

/** Every background task of the program, run by `openbaas serve` (unless --no-workers) and `openbaas worker`. */
export function workerTasks(deps: Deps): WorkerTask[] {
  const webhookDelivery = new DeliveryWorker(deps);
  return [
    { name: 'purge-idempotency-keys', intervalMs: 15 * 60_000, run: () => purgeIdempotencyKeys(deps) },
    {
      name: 'webhook-delivery',
      intervalMs: deps.config.webhookPollIntervalMs,
      run: () => webhookDelivery.run(),
      stop: () => webhookDelivery.stop(),
    },
  ];
}
