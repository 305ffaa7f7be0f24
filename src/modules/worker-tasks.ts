import type { Deps } from '../platform/deps.js';
import { purgeIdempotencyKeys } from '../platform/http/idempotency.js';
import type { WorkerTask } from '../platform/workers.js';

/** Every background task of the program, run by `openbaas serve` (unless --no-workers) and `openbaas worker`. */
export function workerTasks(deps: Deps): WorkerTask[] {
  return [{ name: 'purge-idempotency-keys', intervalMs: 15 * 60_000, run: () => purgeIdempotencyKeys(deps) }];
}
