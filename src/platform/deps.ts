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
