import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { DatabaseHandle, Db } from './db/database.js';
import type { Tx } from './db/transaction.js';

/** Work to do inside the transaction that creates a client (default programs, and so on). */
export type ClientSeeder = (tx: Tx, clientId: string, now: Date, deps: Deps) => Promise<void>;

/** Everything a service or a route needs from the outside: no container, just this object. */
export interface Deps {
  config: Config;
  database: DatabaseHandle;
  db: Db;
  clock: Clock;
  clientSeeders: readonly ClientSeeder[];
}

/**
 * How many requests one batched write takes and how many such writes run at once: as configured
 * (`concurrency`: WRITE_BATCH_CONCURRENCY for the write batchers, CARD_GROUP_CONCURRENCY for the
 * card messages' transaction groups), except on the embedded database, whose one connection runs
 * one at a time.
 */
export function writeBatchSizing(deps: Pick<Deps, 'config' | 'database'>, concurrency = deps.config.writeBatchConcurrency): { sizeMax: number; concurrency: number } {
  return { sizeMax: deps.config.writeBatchSizeMax, concurrency: deps.database.kind === 'pglite' ? 1 : concurrency };
}

/** How many shared reads run at once (READ_BATCH_CONCURRENCY; one on the embedded database). */
export function readBatchConcurrency(deps: Pick<Deps, 'config' | 'database'>): number {
  return deps.database.kind === 'pglite' ? 1 : deps.config.readBatchConcurrency;
}
